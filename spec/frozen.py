"""The spec's records: ``record`` (a frozen dataclass) and ``replace`` (``dataclasses.replace``'s meaning, without its cost).

Every record of the spec is declared ``@record``, which is ``@dataclass(frozen=True)`` whose
hash is computed once per instance (below). It is spelled differently for one more reason: the trace replay runs the spec compiled
by mypyc (:mod:`traces.checking.compiled`), and mypyc turns a class decorated with ``dataclass`` itself
into a C extension class with no instance dictionary, which ``replace`` below cannot copy and
which made the compiled replay slower than the interpreted one. A class with any other
decorator stays an ordinary Python class, so the compiled spec keeps these records as they are
and compiles the functions over them. mypy and every other tool see a frozen dataclass
(``typing.dataclass_transform``).

Every effect builds the next state with ``replace``. ``dataclasses.replace`` runs the generated
``__init__``, which sets every field through ``object.__setattr__``; on ``BrokerState`` (about
twenty fields) that was a third of the time of replaying a trace through the spec
(``python -m cProfile -s tottime -m traces.checking.segments T`` on a 30 000-event retry-storm trace T from
``flowspec record``, before this module). This version copies the instance dictionary,
overwrites the changed fields and gives the copy to a new instance.

It means the same as ``dataclasses.replace`` only for records with nothing for ``__init__`` to
do beyond storing the fields: frozen dataclasses with no ``__post_init__``, no ``InitVar`` or
``ClassVar``, no ``init=False`` field and no ``__slots__``. It checks that on first use per class and refuses
anything else, and it refuses a name that is not a field, as ``dataclasses.replace`` does.
``tests/test_frozen.py`` compares the two on every record type of the spec.

A record keeps its hash once computed. The partial replay (``traces/checking/partial.py``) keeps
sets of candidate states and hashes every state it reaches; a state shares most of its records
with the state before it, so with each record's hash kept only the changed ones are hashed again.
The partial replay of two 1,000-event traces projected to ``queues`` ran 1.2× faster with it
(446–457 against 372–380 events/s, alternating runs of a loop over ``record_workload``, ``project``
and ``replay_partial`` on pool-exhaustion and steady). The hash lives in the instance dictionary;
``replace`` drops it from the copy, and pickling leaves it out (a string's hash differs between
processes).

For the type checker ``replace`` *is* ``dataclasses.replace``, so mypy keeps checking every
call's field names and types, and ``record`` is a ``dataclass_transform``; at run time they are
the plain functions ``_replace`` and ``_record`` (see the end of the module).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final, TypeVar, dataclass_transform

__all__ = ["record", "replace"]

_R = TypeVar("_R")


#: The instance-dictionary key under which a record keeps its hash once computed.
_HASH: Final = "_hash"


def _record(cls: type[_R]) -> type[_R]:
    frozen = dataclasses.dataclass(frozen=True)(cls)
    setattr(frozen, "__hash__", _hash_once(_hashed_fields(frozen)))
    setattr(frozen, "__getstate__", _state_without_hash())
    return frozen


def _hashed_fields(cls: type) -> tuple[str, ...]:
    """The fields the generated ``__hash__`` of a frozen dataclass reads, in order: those with
    ``hash=True``, or with ``hash=None`` and ``compare=True``."""
    return tuple(f.name for f in dataclasses.fields(cls) if (f.compare if f.hash is None else f.hash))


def _hash_once(names: tuple[str, ...]) -> Any:
    """The generated ``__hash__``'s value, the hash of the tuple of the fields ``names``, computed
    once per instance and then kept. Computed here rather than by calling the generated method:
    this module is compiled with the spec, the generated method is not, and the partial replay
    hashes most states it reaches."""

    def __hash__(self: Any) -> int:
        cache = self.__dict__
        h: int | None = cache.get(_HASH)
        if h is None:
            h = cache[_HASH] = hash(tuple([cache[name] for name in names]))
        return h

    return __hash__


def _state_without_hash() -> Any:
    """``__getstate__``: pickling copies the fields, not the cached hash (a string's hash differs
    between processes). Made by a function, like ``__hash__`` above, because mypyc compiles a
    nested function into an object that binds as a method, and a module-level one into one that
    does not."""

    def __getstate__(self: Any) -> dict[str, Any]:
        state: dict[str, Any] = self.__dict__.copy()
        state.pop(_HASH, None)
        return state

    return __getstate__


_FIELDS: dict[type, frozenset[str]] = {}


def _replaceable_fields(cls: type) -> frozenset[str]:
    """The field names of ``cls``, if copying its ``__dict__`` means the same as calling ``__init__``."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"replace() needs a frozen dataclass, not {cls.__name__}")
    if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        raise TypeError(f"replace() cannot copy {cls.__name__}: it has __post_init__ or __slots__")
    fields = dataclasses.fields(cls)
    # ``__dataclass_fields__`` also lists InitVar and ClassVar pseudo-fields; refusing both is conservative.
    if any(not f.init for f in fields) or len(fields) != len(cls.__dataclass_fields__):  # type: ignore[attr-defined]
        raise TypeError(f"replace() cannot copy {cls.__name__}: it has init=False fields, InitVars or ClassVars")
    return frozenset(f.name for f in fields)


_new_object: Final = object.__new__
_set_attribute: Final = object.__setattr__


def _replace(obj: Any, /, **changes: Any) -> Any:
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = _replaceable_fields(cls)
    # ``dict.copy`` clones the instance dictionary in one go, where filling a new instance's
    # dictionary inserted the fields one by one (docs/benchmarks.md has the measurement).
    state = obj.__dict__.copy()
    state.pop(_HASH, None)  # the copy's fields differ: its hash is computed afresh
    state.update(changes)
    if len(state) != len(names):  # a change named something that is not a field
        unknown = ", ".join(sorted(set(changes) - names))
        raise TypeError(f"{cls.__name__} has no field(s) {unknown}")
    new = _new_object(cls)
    _set_attribute(new, "__dict__", state)
    return new


if TYPE_CHECKING:
    from dataclasses import replace as replace

    @dataclass_transform(frozen_default=True)
    def record(cls: type[_R]) -> type[_R]:
        """A frozen dataclass (see the module docstring for why it has its own name)."""

# At run time the two names are the functions above. They are bound through globals(), not in
# an ``else:`` branch, because mypyc compiles the ``else`` of ``if TYPE_CHECKING`` as unreachable
# code, and this module is compiled with the rest of the spec (traces/checking/compiled.py).
globals().update(record=_record, replace=_replace)
