"""``spec.frozen.replace`` means what ``dataclasses.replace`` means, on every record the spec replaces."""

from __future__ import annotations

import dataclasses

import pytest

from spec.frozen import replace
from spec.machine import successors
from properties.models import MODELS
from spec.releases import profile
from spec.state import initial_state


def test_same_result_as_dataclasses_replace_on_reachable_states() -> None:
    model = MODELS["pool"](profile("5.3.3"))
    s = initial_state(model.config)
    seen = 0
    for _, after, _ in successors(model.config, s, model.env):
        for f in dataclasses.fields(after):
            value = getattr(s, f.name)
            ours, theirs = replace(after, **{f.name: value}), dataclasses.replace(after, **{f.name: value})
            assert ours == theirs and type(ours) is type(theirs)
            seen += 1
        for e in after.executors:
            assert replace(e, queue=()) == dataclasses.replace(e, queue=())
    assert seen


def test_refuses_unknown_fields_and_records_it_cannot_copy() -> None:
    s = initial_state(MODELS["pool"](profile("5.3.3")).config)
    with pytest.raises(TypeError, match="no field"):
        replace(s, not_a_field=1)  # type: ignore[call-arg]  # mypy refuses it too: the point of the alias

    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            assert self.x >= 0

    @dataclasses.dataclass
    class Mutable:
        x: int

    for record in (Checked(1), Mutable(1)):
        with pytest.raises(TypeError, match="cannot copy|frozen"):
            replace(record, x=2)


def test_a_record_keeps_its_hash_but_neither_a_copy_nor_a_pickle_carries_it() -> None:
    import pickle

    model = MODELS["pool"](profile("5.3.3"))
    s = initial_state(model.config)
    h = hash(s)
    assert s.__dict__["_hash"] == h == hash(s)
    later = replace(s, now=s.now + 1)
    assert "_hash" not in later.__dict__ and hash(later) != h  # its fields differ, so must its hash
    assert hash(replace(later, now=s.now)) == h and replace(later, now=s.now) == s
    copied = pickle.loads(pickle.dumps(s))
    assert "_hash" not in copied.__dict__ and copied == s and hash(copied) == h


def test_a_record_hashes_to_what_the_generated_hash_gives() -> None:
    """The kept hash is the frozen dataclass's own (the tuple of its hashed fields), on every record of reachable states."""
    model = MODELS["pool"](profile("5.3.3"))
    records = []
    for _, after, out in successors(model.config, initial_state(model.config), model.env):
        records += [after, after.lock, out, *out.responses, *after.io_threads, *after.executors, *after.buckets]
        records += [t for e in after.executors for t in (*e.queue, *e.workers)]
    assert len({type(r) for r in records}) >= 5
    for r in records:
        fields = tuple(getattr(r, f.name) for f in dataclasses.fields(r) if (f.compare if f.hash is None else f.hash))
        assert hash(r) == hash(fields), type(r).__name__
