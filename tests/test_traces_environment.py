"""The hidden environment a trace declares (the header's ``environment``): written by the recorder,
kept by projection, refused when malformed, and searched exactly by the partial replay: what the
declaration allows, never more."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spec.actors import Action, FastFailureStep
from spec.codes import RequestCode
from spec.environment import ClockAdvances, OperatorSetsQueueWait
from spec.frozen import replace
from spec.machine import Environment, candidate_actions, enabled, step
from spec.profiles import ExecutorName
from spec.remoting import DispatchCreatesTask, DispatchQueuesTask, DispatchStartsWorker, RequestArrives
from spec.state import BrokerState, initial_state
from spec.workers import WorkerThrowsInsideLock
from traces.checking.partial import Budgets, PartialReplay, decide, replay_partial, witness_environments
from traces.checking.reduction import Reduction
from traces.checking.survey import witness_accepted
from traces.cli import main
from traces.format.project import project
from traces.format.read import TraceInputError, raw_records, validate
from traces.format.records import (
    QUIET_ENVIRONMENT,
    UNDECLARED_ENVIRONMENT,
    Observation,
    TraceHeader,
    declared_environment,
    header_from_record,
)
from traces.format.write import TraceWriter
from traces.recording.examples import EXAMPLES
from traces.recording.record import WORKLOADS, TraceRecorder, record_workload

Record = dict[str, Any]


def _records(path: Path) -> list[Record]:
    return [r for _, r in raw_records(path)]


def _recorded(tmp_path: Path, workload: str, events: int, name: str = "t.jsonl") -> list[Record]:
    record_workload(tmp_path / name, workload, "5.3.3", events)
    return _records(tmp_path / name)


def _without_environment(header: Record) -> Record:
    return {k: v for k, v in header.items() if k != "environment"}


def test_a_recording_declares_its_workloads_environment_and_projection_keeps_it(tmp_path: Path) -> None:
    faults = _recorded(tmp_path, "faults", 30)
    header = header_from_record(faults[0])
    assert header.environment == declared_environment(WORKLOADS["faults"].env)
    assert header.environment.ha_appends and header.environment.limiter_overflows and header.environment.max_foreign_tasks == 4
    assert header.environment.queue_wait_changes == ((ExecutorName.SEND, 30), (ExecutorName.SEND, 50))
    for level in (Observation.QUEUES, Observation.BLACK_BOX):
        projected = list(project(faults, level))
        assert header_from_record(projected[0]).environment == header.environment
    assert header_from_record(_recorded(tmp_path, "steady", 30, "s.jsonl")[0]).environment == QUIET_ENVIRONMENT


@pytest.mark.parametrize("form", ["jsonl", "parquet"])
def test_flowspec_record_and_project_keep_the_declaration(tmp_path: Path, form: str) -> None:
    recorded = tmp_path / f"faults.{form}" if form == "jsonl" else tmp_path / "faults"
    assert main(["record", "--workload", "faults", "--profile", "4.9.8", "--events", "30", "--out", str(recorded)]) == 0
    for level in ("queues", "black-box"):
        out = tmp_path / f"{level}.jsonl"
        assert main(["project", str(recorded), "--level", level, "--out", str(out)]) == 0
        (summary,) = validate([str(out)]).traces.values()
        assert summary.header.observation.value == level
        assert summary.header.environment == declared_environment(WORKLOADS["faults"].env)


def test_the_declaration_survives_parquet_and_a_header_without_one_declares_the_default(tmp_path: Path) -> None:
    record_workload(tmp_path / "t.parquet", "faults", "4.9.8", 30)
    validator = validate([str(tmp_path / "t.parquet")])
    (header,) = validator.traces.values()
    assert header.header.environment == declared_environment(WORKLOADS["faults"].env)
    bare = header_from_record(_without_environment(_records(EXAMPLES / "faults-5.3.3.jsonl")[0]))
    assert bare.environment is None and bare.hidden_environment() == UNDECLARED_ENVIRONMENT


#: (change to the header's ``environment``, what the refusal must say).
MALFORMED: list[tuple[Callable[[Record], None], str]] = [
    (lambda h: h.update(environment=[]), "field 'environment' must be an object"),
    (lambda h: h.update(environment="{"), "field 'environment': malformed JSON"),
    (lambda h: h["environment"].update(storms=True), "field environment: unknown field(s) ['storms']"),
    (lambda h: h["environment"].update(ha_appends=1), "field environment.ha_appends must be bool, got 1"),
    (lambda h: h["environment"].update(foreign_tasks="send"), "field environment.foreign_tasks must be list"),
    (lambda h: h["environment"].update(foreign_tasks=["bogus"]), "field environment.foreign_tasks[0]: unknown executor 'bogus'"),
    (lambda h: h["environment"].update(foreign_tasks=["pull"]), "field environment.foreign_tasks[0]: the broker has no 'pull' executor"),
    (lambda h: h["environment"].update(max_foreign_tasks=0), "field environment.max_foreign_tasks must be at least 1 exactly when foreign_tasks names an executor"),
    (lambda h: h["environment"].update(foreign_tasks=[], max_foreign_tasks=2), "got 2 with foreign_tasks []"),
    (lambda h: h["environment"].update(fast_failure_toggles=[True, True]), "field environment.fast_failure_toggles names a value twice"),
    (lambda h: h["environment"].update(fast_failure_toggles=[0]), "field environment.fast_failure_toggles[0] must be bool"),
    (lambda h: h["environment"].update(queue_wait_changes=[{"queue": "send"}]), "field environment.queue_wait_changes[0] must be an object with exactly 'queue' and 'wait_ms'"),
    (lambda h: h["environment"].update(queue_wait_changes=[{"queue": "pull", "wait_ms": 5}]), "queue_wait_changes[0].queue: fast failure does not clean queue 'pull' here"),
    (lambda h: h["environment"].update(queue_wait_changes=[{"queue": "send", "wait_ms": -1}]), "field environment.queue_wait_changes[0].wait_ms must be at least 0, got -1"),
]


@pytest.mark.parametrize(("change", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_validation_refuses_a_malformed_environment_naming_the_field(tmp_path: Path, change: Callable[[Record], None], message: str) -> None:
    records = _records(EXAMPLES / "faults-5.3.3.jsonl")[:5]
    change(records[0])
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(TraceInputError) as refused:
        validate([str(path)])
    assert "t.jsonl:1: field" in str(refused.value) and message in str(refused.value)


@pytest.mark.spark
def test_flowspec_check_exits_2_on_a_malformed_environment(tmp_path: Path) -> None:
    records = _records(EXAMPLES / "faults-5.3.3.jsonl")
    records[0]["environment"]["ha_appends"] = "yes"
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["check", str(path)]) == 2


# -- The search proposes the declared environment, never more ------------------------------------


def test_at_queues_an_exception_in_the_lock_is_searched_only_where_the_trace_declares_it() -> None:
    """faults-5.3.3 answers SYSTEM_ERROR from inside the put lock, a step queues does not show: the
    exhaustive search explains it under the recorded declaration and under none (the default allows
    it), and under a declared quiet environment no run explains that answer."""
    records = _records(EXAMPLES / "faults-5.3.3.jsonl")
    assert any(r["kind"] == WorkerThrowsInsideLock.__name__ for r in records)
    projected = list(project(records, Observation.QUEUES))
    budgets = Budgets(candidates=5_000, steps=2_000_000, seconds=60)
    for header, verdict in ((projected[0], "conformant"), (_without_environment(projected[0]), "conformant"), ({**projected[0], "environment": {}}, "violation")):
        result = decide(PartialReplay(header_from_record(header), budgets), projected[1:])
        assert result.verdict == verdict, result.detail
        if verdict == "conformant":
            assert witness_accepted([header, *projected[1:]], result)
            assert any(isinstance(a, WorkerThrowsInsideLock) for a, _, _ in result.witness)
    assert "code 1" in result.detail and "no run of the spec explains it" in result.detail


def _run(path: Path, declared: Environment) -> list[Record]:
    """A full trace of the spec in which an operator lowers the send queue's wait to 5 ms while two
    sends hold both workers and a third waits in the queue: the next fast-failure run answers it
    [TIMEOUT_CLEAN_QUEUE] after 9 ms, which the configured wait (50 ms) could not. Fast failure runs
    as soon as it is due; the two workers then finish."""
    config = WORKLOADS["steady"].config("5.3.3")
    send = RequestCode.SEND_MESSAGE
    state: list[BrokerState] = [initial_state(config)]
    threads = replace(QUIET_ENVIRONMENT, clock_steps=(1,), max_elapsed_ms=1_000)
    with TraceWriter(path) as writer:
        recorder = TraceRecorder(writer, TraceHeader("wait", "test", "1", "5.3.3", Observation.FULL, config, declared))

        def take(a: Action) -> None:
            after, out = step(config, state[0], a)
            recorder.record(a, out.responses, after.now)
            state[0] = after
            while due := [f for f in candidate_actions(config, state[0], threads) if isinstance(f, FastFailureStep) and enabled(config, state[0], f)]:
                take(due[0])

        take(ClockAdvances(1))
        take(OperatorSetsQueueWait(ExecutorName.SEND, 5))
        for io, last in ((0, DispatchStartsWorker(0)), (1, DispatchStartsWorker(1)), (0, DispatchQueuesTask(0))):
            take(RequestArrives(io, send, "TopicTest", False))
            take(DispatchCreatesTask(io))
            take(last)
        while state[0].executor(ExecutorName.SEND).queue:
            take(ClockAdvances(1))
        while state[0].requests_inside():
            moves = [a for a in candidate_actions(config, state[0], threads) if enabled(config, state[0], a) and not isinstance(a, ClockAdvances)]
            take(moves[0] if moves else ClockAdvances(1))
    return _records(path)


@pytest.fixture(scope="module")
def lowered_wait(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    """:func:`_run` projected to black-box, declaring the operator's change."""
    declared = replace(QUIET_ENVIRONMENT, queue_wait_changes=((ExecutorName.SEND, 5),))
    projected = list(project(_run(tmp_path_factory.mktemp("wait") / "t.jsonl", declared), Observation.BLACK_BOX))
    remarks = [r["remark"] for e in projected for r in e.get("responses") or ()]
    assert any("[TIMEOUT_CLEAN_QUEUE]" in (m or "") and "period in queue: 9ms" in (m or "") for m in remarks), remarks
    return projected


def test_at_black_box_a_declared_operator_change_explains_an_early_timeout(lowered_wait: list[Record]) -> None:
    """Both searches find the run with the operator's change (which black-box does not show), and
    the witness is a full trace the ordinary replay accepts."""
    header = header_from_record(lowered_wait[0])
    guided = replay_partial(header, lowered_wait[1:], Budgets(candidates=5_000, steps=5_000_000, seconds=120, witness_share=1.0))
    exhaustive = decide(PartialReplay(header, Budgets(seconds=120), Reduction(header.config, header.observation, lowered_wait[1:])), lowered_wait[1:])
    for result in (guided, exhaustive):
        assert result.verdict == "conformant", result.detail
        assert witness_accepted(lowered_wait, result)
        assert OperatorSetsQueueWait(ExecutorName.SEND, 5) in [a for a, _, _ in result.witness]


def test_at_black_box_a_declared_quiet_trace_that_needs_an_operator_change_is_a_violation(lowered_wait: list[Record]) -> None:
    """The same trace declaring a quiet environment, or none: no run without the change explains
    the timeout, and the exhaustive search says so."""
    for header_record in ({**lowered_wait[0], "environment": {}}, _without_environment(lowered_wait[0])):
        header = header_from_record(header_record)
        result = decide(PartialReplay(header, Budgets(seconds=120), Reduction(header.config, header.observation, lowered_wait[1:])), lowered_wait[1:])
        assert result.verdict == "violation", result.detail
        assert result.detail.startswith("seq 4 ts 11") and "[TIMEOUT_CLEAN_QUEUE]" in result.detail


def test_the_witness_first_search_tries_the_declarations_narrowest_part_first(tmp_path: Path) -> None:
    """Under a declaration that allows more than an exception in the lock, the witness-first search
    first searches as for a trace without one, then with every declared step but tasks of the
    broker's own where it declares them, then with every declared step; otherwise once."""
    faults = header_from_record(_recorded(tmp_path, "faults", 10)[0])
    assert faults.environment is not None and faults.environment.foreign_tasks
    own = replace(faults.environment, foreign_tasks=(), max_foreign_tasks=0)
    assert [e for _, e in witness_environments(faults)] == [replace(QUIET_ENVIRONMENT, exceptions_in_lock=True), own, faults.environment]
    steady = header_from_record(_recorded(tmp_path, "steady", 10, "s.jsonl")[0])
    assert [e for _, e in witness_environments(steady)] == [QUIET_ENVIRONMENT]
    bare = header_from_record(_without_environment(_records(EXAMPLES / "faults-5.3.3.jsonl")[0]))
    assert [e for _, e in witness_environments(bare)] == [UNDECLARED_ENVIRONMENT]
