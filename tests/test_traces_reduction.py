"""The reduction of the exhaustive search (traces.checking.reduction) loses no run: the reduced and
the unreduced search give the same verdict, on recorded runs and on runs with one answer changed,
at both levels below full; the reduced search's witnesses are runs the full replay accepts; and
the relations it relies on hold when the spec's rules are executed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec.codes import CLEAN_QUEUE_TAGS
from spec.config import BrokerConfig
from spec.frozen import replace
from spec.machine import Environment, RequestTemplate, successors
from spec.state import BrokerState, RequestTask
from spec.invariants import known_defects
from traces.checking.partial import Budgets, PartialReplay, PartialResult, decide, witness_records
from traces.checking.reduction import Reduction, Representatives, never_cleaned
from traces.checking.replay import replay_records
from traces.format.project import project
from traces.format.read import raw_records
from traces.format.records import Observation, action_from_record, header_from_record
from traces.recording.record import record_workload

#: A few seconds a search: the unreduced search decides some 20-step black-box recordings within it
#: (slow-disk and retry-storm-limited; the others it leaves inconclusive, where the reduced one is
#: often conformant), and every changed one.
BUDGETS = Budgets(candidates=20_000, steps=150_000, seconds=30)


def _recorded(tmp_path: Path, workload: str, profile: str, events: int, seed: int = 0) -> list[dict[str, Any]]:
    out = tmp_path / f"{workload}-{profile}-{seed}.jsonl"
    record_workload(out, workload, profile, events, seed=seed)
    return [r for _, r in raw_records(out)]


def _exhaustive(projected: list[dict[str, Any]], reduce: bool) -> PartialResult:
    header = header_from_record(projected[0])
    reduction = Reduction(header.config, header.observation, projected[1:]) if reduce else None
    return decide(PartialReplay(header, BUDGETS, reduction), projected[1:])


def _changed(projected: list[dict[str, Any]], pick: int) -> list[dict[str, Any]]:
    """The trace with one observed answer's code changed (SUCCESS <-> SYSTEM_BUSY)."""
    answered = [i for i, e in enumerate(projected) if e.get("responses")]
    out = list(projected)
    if answered:
        i = answered[pick % len(answered)]
        r = dict(out[i]["responses"][0])
        r["code"] = 2 if r["code"] == 0 else 0
        out[i] = {**out[i], "responses": [r, *out[i]["responses"][1:]]}
    return out


def _same_verdict(projected: list[dict[str, Any]]) -> tuple[PartialResult, PartialResult]:
    reduced, full = _exhaustive(projected, True), _exhaustive(projected, False)
    if "inconclusive" not in (reduced.verdict, full.verdict):
        assert reduced.verdict == full.verdict, (reduced.detail, full.detail)
        assert reduced.events == full.events  # a violation at the same event
    assert full.verdict != "inconclusive" or reduced.verdict != "violation" or reduced.events <= full.events
    if reduced.verdict == "conformant":
        header = header_from_record(projected[0])
        (replayed,) = replay_records(witness_records(header, reduced))
        assert replayed.divergence is None or set(replayed.divergence.observed.split(", ")) <= known_defects(header.config.profile)
    assert reduced.steps <= full.steps or full.verdict == "inconclusive"
    return reduced, full


@settings(max_examples=5, deadline=None, derandomize=True)
@given(
    workload=st.sampled_from(["steady", "bursts", "full-send-queue", "slow-disk", "pool-exhaustion", "retry-storm-limited", "every-code"]),
    profile=st.sampled_from(["4.3.2", "4.9.8", "5.3.3"]),
    level=st.sampled_from([Observation.QUEUES, Observation.BLACK_BOX]),
    seed=st.integers(0, 1000),
    pick=st.integers(0, 10_000),
)
def test_the_reduced_and_the_unreduced_search_agree_on_recorded_and_changed_traces(
    tmp_path_factory: pytest.TempPathFactory, workload: str, profile: str, level: Observation, seed: int, pick: int
) -> None:
    records = _recorded(tmp_path_factory.mktemp("rec"), workload, profile, 20 if level is Observation.BLACK_BOX else 120, seed)
    projected = list(project(records, level))
    _same_verdict(projected)
    _same_verdict(_changed(projected, pick))


def test_on_short_black_box_traces_both_decide_and_the_reduced_search_is_smaller(tmp_path: Path) -> None:
    """Not vacuous: on these traces both searches decide, conformant and (one answer changed) violation."""
    projected = list(project(_recorded(tmp_path, "slow-disk", "5.3.3", 20), Observation.BLACK_BOX))
    reduced, full = _same_verdict(projected)
    assert (reduced.verdict, full.verdict) == ("conformant", "conformant")
    assert reduced.steps < full.steps and reduced.max_candidates < full.max_candidates
    projected = list(project(_recorded(tmp_path, "steady", "5.3.3", 20), Observation.BLACK_BOX))
    reduced, full = _same_verdict(_changed(projected, 0))
    assert (reduced.verdict, full.verdict) == ("violation", "violation")
    assert reduced.steps < full.steps


# -- The relations, checked by executing the rules ------------------------------------------------

ARRIVALS = Environment(
    requests=(RequestTemplate(310), RequestTemplate(28, ""), RequestTemplate(10)),
    max_requests=10**6,
    clock_steps=(1, 7),
    max_elapsed_ms=10**9,
    exceptions_in_lock=True,
)


def _states(tmp_path: Path, workload: str, profile: str) -> tuple[BrokerConfig, list[BrokerState]]:
    """The spec's states along a recorded full run."""
    from spec.machine import step
    from spec.state import initial_state

    records = _recorded(tmp_path, workload, profile, 250)
    config = header_from_record(records[0]).config
    s = initial_state(config)
    states = [s]
    for r in records[1:]:
        if r["kind"] != "Response":
            s = step(config, s, action_from_record(r))[0]
            states.append(s)
    return config, states


def _permuted(s: BrokerState) -> BrokerState:
    """``s`` with its remoting threads and each executor's workers in reverse order (the lock's holder renamed)."""
    holder = s.lock.holder
    executors = []
    for e in s.executors:
        n = len(e.workers)
        if holder is not None and holder[0] == e.name.value:
            holder = (holder[0], n - 1 - holder[1])
        executors.append(replace(e, workers=e.workers[::-1]))
    return replace(s, io_threads=s.io_threads[::-1], executors=tuple(executors), lock=replace(s.lock, holder=holder))


def _later(s: BrokerState, free: frozenset[int], ms: int) -> BrokerState:
    """``s`` with the stamp of every task of ``free`` ``ms`` later."""
    def later(t: Any) -> Any:
        return replace(t, create_timestamp=t.create_timestamp + ms) if isinstance(t, RequestTask) and t.request.id in free else t

    return replace(
        s,
        io_threads=tuple(replace(io, task=later(io.task)) for io in s.io_threads),
        executors=tuple(
            replace(e, queue=tuple(later(q) for q in e.queue), workers=tuple(replace(w, task=later(w.task)) for w in e.workers))
            for e in s.executors
        ),
    )


@pytest.mark.parametrize("workload,profile", [("full-send-queue", "5.3.3"), ("slow-disk", "4.9.8"), ("faults", "5.3.3")])
def test_permuting_threads_maps_the_steps_onto_the_steps(tmp_path: Path, workload: str, profile: str) -> None:
    """The symmetry the reduction uses at black-box: from a state and from its permutation, the
    spec's steps write the same responses and reach states of the same class."""
    config, states = _states(tmp_path, workload, profile)
    reduction = Reduction(config, Observation.BLACK_BOX, [])
    checked = 0
    for s in states:
        mine = sorted((repr(out.responses), repr(reduction.key(t))) for _, t, out in successors(config, s, ARRIVALS))
        theirs = sorted((repr(out.responses), repr(reduction.key(t))) for _, t, out in successors(config, _permuted(s), ARRIVALS))
        assert mine == theirs
        checked += s != _permuted(s)
    assert checked > 10  # states where the permutation moved something


@pytest.mark.parametrize("workload,profile", [("full-send-queue", "5.3.3"), ("slow-disk", "4.9.8"), ("bursts", "4.3.2")])
def test_a_later_stamp_simulates_an_earlier_one(tmp_path: Path, workload: str, profile: str) -> None:
    """Every step from a state that does not answer with a cleaner's remark is a step from the same
    state with later stamps, writing the same and reaching a state that again dominates."""
    config, states = _states(tmp_path, workload, profile)
    free = frozenset(range(1, 10**4))
    reduction = Reduction(config, Observation.QUEUES, [])
    reduction.free_stamps = free
    moved = 0
    for s in states:
        for ms in (1, 250):
            later = _later(s, free, ms)
            theirs = {a: (t, out) for a, t, out in successors(config, later, ARRIVALS)}
            for a, t, out in successors(config, s, ARRIVALS):
                if any(r.remark and any(tag in r.remark for tag in CLEAN_QUEUE_TAGS) for r in out.responses):
                    continue
                assert a in theirs, (a, s)
                t2, out2 = theirs[a]
                assert out2 == out and reduction.key(t2) == reduction.key(t)
                keep = Representatives(reduction)
                assert keep.admit(t2) and not keep.admit(t)  # the later one simulates the earlier
            moved += later != s
    assert moved > 10


def test_requests_a_cleaner_answers_keep_their_stamps() -> None:
    events = [
        {"kind": "RequestArrives", "request_id": 70, "ts": 1},
        {"kind": "RequestArrives", "request_id": 71, "ts": 2},
        {"kind": "Response", "ts": 9, "responses": [{"request_id": 71, "code": 2, "remark": "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: 7ms, size of queue: 0"}]},
    ]
    assert never_cleaned(events) == frozenset({1})


@pytest.mark.parametrize("workload,profile", [("slow-disk", "5.3.3"), ("slow-disk", "4.9.8"), ("faults", "5.3.3")])
def test_a_store_busy_for_good_is_busy_alike_whenever_the_lock_was_taken(tmp_path: Path, workload: str, profile: str) -> None:
    """Two states that differ only in a beginTimeInLock more than the timeout in the past take the
    same steps, write the same and reach the same class (the relation "busy for good")."""
    config, states = _states(tmp_path, workload, profile)
    reduction = Reduction(config, Observation.QUEUES, [])
    reduction.free_lock_time = False  # as in a trace that shows busy answers
    assert reduction.busy_for_good
    checked = 0
    for s in states:
        begin = s.lock.begin_time_in_lock
        if begin == 0 or s.now - begin <= config.os_page_cache_busy_timeout_ms or begin - config.start_time_ms < 2:
            continue
        earlier = replace(s, lock=replace(s.lock, begin_time_in_lock=begin - 1 - (begin - config.start_time_ms) // 2))
        assert reduction.key(earlier) == reduction.key(s)
        mine = sorted((repr(a), repr(out), repr(reduction.key(t))) for a, t, out in successors(config, s, ARRIVALS))
        theirs = sorted((repr(a), repr(out), repr(reduction.key(t))) for a, t, out in successors(config, earlier, ARRIVALS))
        assert mine == theirs
        checked += 1
    assert checked > 5


def test_the_reduced_search_alone_explains_what_the_unreduced_one_cannot_afford(tmp_path: Path) -> None:
    """A 20-step recording of bursts under 5.3.3 at black-box: the reduced exhaustive search finds a
    witness in about 24k spec steps; the unreduced one runs past 400k without deciding
    (``python -m traces.checking.reduction_survey --level black-box --events 20``)."""
    projected = list(project(_recorded(tmp_path, "bursts", "5.3.3", 20), Observation.BLACK_BOX))
    header = header_from_record(projected[0])
    search = PartialReplay(header, Budgets(candidates=20_000, steps=100_000, seconds=60), Reduction(header.config, header.observation, projected[1:]))
    result = decide(search, projected[1:])
    assert result.verdict == "conformant", result.detail
    (replayed,) = replay_records(witness_records(header, result))
    assert replayed.divergence is None or set(replayed.divergence.observed.split(", ")) <= known_defects(header.config.profile)
