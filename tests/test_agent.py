"""The Java agent (traces/agent, docs/agent.md) records the stand-in broker of tests/agent, and
``flowspec check`` judges what it wrote: the scenarios conformant, a planted defect a violation
naming its claim, a trace the agent could not record whole refused as invalid input.

The stand-ins are our own classes with Apache RocketMQ's names and signatures (only what the
agent touches), compiled here into a temporary directory; ``make pytest`` builds the agent first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from traces.checking.partial import Budgets, replay_partial, witness_records
from traces.checking.replay import replay_records
from traces.cli import main
from traces.format.project import project
from traces.format.read import TraceInputError, validate
from traces.format.records import Observation, header_from_record
from traces.recording.examples import EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
AGENT_JAR = ROOT / "build" / "flowspec-agent.jar"
STANDINS = ROOT / "tests" / "agent"
#: The executors the traces model: the stand-in broker's two pools; playing 4.9.8, send only
#: (4.9.8's admin pool is Executors.newFixedThreadPool, whose queue the agent cannot replace).
EXECUTORS = {"5.3.3": "executors=send+admin", "4.9.8": "executors=send"}
#: The JVM options that make the stand-ins play a release (MQVersion.CURRENT_VERSION and the
#: differences the agent sees).
RELEASE = {"5.3.3": (), "4.9.8": ("-Dstandin.release=V4_9_8",)}


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-ins and the scenario driver, compiled."""
    assert AGENT_JAR.is_file(), f"{AGENT_JAR} is missing: build it with `make agent` (make pytest does)"
    javac = shutil.which("javac")
    assert javac is not None, "the agent's tests need a JDK's javac (apt-get install -y openjdk-17-jdk-headless)"
    out = tmp_path_factory.mktemp("standins")
    sources = [str(p) for p in sorted(STANDINS.rglob("*.java"))]
    subprocess.run([javac, "--release", "17", "-nowarn", "-d", str(out), *sources], check=True)
    return out


def record(
    classes: Path,
    out: Path,
    scenario: str,
    *options: str,
    release: str = "5.3.3",
    level: str = "queues",
    props: tuple[str, ...] = (),
) -> dict[str, int]:
    """Runs the scenario with the agent attached, into the trace ``out/SCENARIO-RELEASE-LEVEL``;
    the answers the client saw, by remark tag."""
    agent = ",".join([f"out={out}", f"trace_id={scenario}-{release}-{level}", f"level={level}", EXECUTORS[release], *options])
    run = subprocess.run(
        ["java", *RELEASE[release], *props, f"-javaagent:{AGENT_JAR}={agent}", "-cp", str(classes), "flowspec.standin.Scenario", scenario],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    answers: dict[str, int] = json.loads(run.stdout.splitlines()[-1])
    return answers


def events(trace_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for part in sorted(trace_dir.glob("part-*.jsonl")) for line in part.read_text().splitlines()]


#: Each scenario, the answers it must provoke (so that it tests what it is named for), and the
#: event kinds its trace must then show.
SCENARIOS = {
    "steady": ({"code 0"}, {"DispatchStartsWorker", "DispatchQueuesTask", "WorkerTakesTask", "WorkerProcessesRequest", "Response"}),
    "overload": ({"[OVERLOAD]"}, {"DispatchRejectsOverload"}),
    "timeout": ({"[TIMEOUT_CLEAN_QUEUE]"}, {"FastFailureStartsRun", "FastFailureCleansExpiredHead", "FastFailureStopsAtHead"}),
    "slow-disk": ({"[REJECTREQUEST]", "[PCBUSY_CLEAN_QUEUE]"}, {"DispatchRejectsRequest", "FastFailureDrainsBusySendQueue"}),
    "fast-failure-off": ({"code 0"}, {"FastFailureSkipsRun"}),
    "pool-exhaustion": ({"[REJECTREQUEST]"}, {"DispatchRejectsRequest"}),
}


#: Both releases: 5.3.3's stuck beginTimeInLock after an exception in the put lock refuses the
#: sends that follow; 4.9.8 resets it in ``finally`` and serves them.
FAULT = {"5.3.3": ({"[REJECTREQUEST]"}, {"DispatchRejectsRequest"}), "4.9.8": ({"code 0"}, {"Response"})}
#: At 'full' the put path's answers are on its steps, which the trace then shows.
FULL_KINDS = {
    "WorkerPassesPutCheck",
    "WorkerAcquiresPutLock",
    "WorkerCreatesMappedFile",
    "WorkerAppendsAndUnlocks",
    "CommitServiceCommits",
    "CommitServiceReturnsBuffer",
}


def verdicts(capsys: pytest.CaptureFixture[str], paths: list[Path], expected_exit: int) -> dict[str, Any]:
    """``flowspec check --json`` on ``paths``: each trace's verdict and findings that are not a pass."""
    code = main(["check", *map(str, paths), "--json"])
    traces = json.loads(capsys.readouterr().out)["traces"]
    found = {t["trace_id"]: (t["verdict"], [(f["rule"], f["status"], f["sample"][:1]) for f in t["findings"] if f["status"] == "violation"]) for t in traces}
    assert code == expected_exit, found
    return found


@pytest.mark.spark
@pytest.mark.parametrize("level", ["queues", "full"])
@pytest.mark.parametrize("release", ["5.3.3", "4.9.8"])
def test_the_scenarios_recorded_by_the_agent_are_conformant(
    spark: SparkSession, classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], release: str, level: str
) -> None:
    # steady sends admin commands, which 4.9.8's trace cannot model (EXECUTORS)
    scenarios = {**SCENARIOS, "fault-inside-lock": FAULT[release]}
    if release == "4.9.8":
        del scenarios["steady"]
    recorded: set[str] = set()
    for scenario, (answers, kinds) in scenarios.items():
        seen = record(classes, tmp_path, scenario, release=release, level=level)
        assert answers <= set(seen), f"{scenario}: the client saw {seen}, expected {answers} among them"
        trace = events(tmp_path / f"{scenario}-{release}-{level}")
        assert trace[0]["profile"] == trace[0]["implementation_version"] == release
        assert trace[0]["observation"] == level
        kinds_seen = {e["kind"] for e in trace}
        if level == "full":
            kinds = kinds - {"Response"}
        assert kinds <= kinds_seen, f"{scenario}: the trace lacks {kinds - kinds_seen}"
        recorded |= kinds_seen
    if level == "full":
        assert FULL_KINDS <= recorded and "Response" not in recorded
    found = verdicts(capsys, [tmp_path], 0)
    assert found == {f"{s}-{release}-{level}": ("conformant", []) for s in scenarios}


@pytest.mark.spark
def test_a_fast_failure_that_cleans_early_is_a_violation_of_its_claim(
    spark: SparkSession, classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The planted stand-in cleans a head 30 ms before its 40 ms wait is over.
    assert "[TIMEOUT_CLEAN_QUEUE]" in record(classes, tmp_path, "timeout", props=("-Dstandin.planted.clean_early_ms=30",))
    [(verdict, broken)] = verdicts(capsys, [tmp_path], 1).values()
    assert verdict == "violation" and {rule for rule, _, _ in broken} == {"replay", "timeout_only_after_the_queue_wait"}


@pytest.mark.spark
def test_a_4_9_8_broker_with_a_stuck_begin_time_in_lock_is_a_violation(
    spark: SparkSession, classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The planted 4.9.8 stand-in leaves beginTimeInLock stuck after the exception, as 4.0.0-4.9.2
    # did: its [REJECTREQUEST] answers have no busy store under 4.9.8's spec.
    props = ("-Dstandin.planted.stuck_begin_time=true",)
    assert "[REJECTREQUEST]" in record(classes, tmp_path, "fault-inside-lock", release="4.9.8", props=props)
    assert "[REJECTREQUEST]" in record(classes, tmp_path, "fault-inside-lock", release="4.9.8", level="full", props=props)
    found = verdicts(capsys, [tmp_path], 1)
    # At 'queues' the put lock is not shown: the replay names the dispatch guard that fails.
    verdict, [(rule, _, [sample])] = found["fault-inside-lock-4.9.8-queues"]
    assert verdict == "violation" and rule == "replay"
    assert "DispatchRejectsRequest" in sample["detail"] and "rejectRequest()`` is true (store busy" in sample["detail"]
    # At 'full' the claim itself is judged.
    verdict, broken = found["fault-inside-lock-4.9.8-full"]
    assert verdict == "violation" and {r for r, _, _ in broken} == {"replay", "rejectrequest_only_while_busy_or_deficient"}


@pytest.mark.spark
def test_5_3_3_s_stuck_begin_time_in_lock_is_its_known_defect_at_full(
    spark: SparkSession, classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record(classes, tmp_path, "fault-inside-lock", level="full")
    assert main(["check", str(tmp_path), "--json"]) == 0
    [trace] = json.loads(capsys.readouterr().out)["traces"]
    assert trace["verdict"] == "conformant"
    assert {f["rule"]: f["status"] for f in trace["findings"]}["begin_time_zero_when_lock_free"] == "known defect"


def test_the_header_declares_what_the_broker_may_do_unseen(classes: Path, tmp_path: Path) -> None:
    """Any release may throw inside the put lock; only a slave's HA service appends under it; the
    foreign tasks are those the recording saw, counted."""
    record(classes, tmp_path, "overload")
    assert events(tmp_path / "overload-5.3.3-queues")[0]["environment"] == {"exceptions_in_lock": True, "ha_appends": False}
    record(classes, tmp_path / "slave", "overload", props=("-Dstandin.role=SLAVE",))
    assert events(tmp_path / "slave" / "overload-5.3.3-queues")[0]["environment"] == {"exceptions_in_lock": True, "ha_appends": True}
    record(classes, tmp_path, "foreign-task")
    trace = events(tmp_path / "foreign-task-5.3.3-queues")
    assert trace[0]["environment"] == {"exceptions_in_lock": True, "ha_appends": False, "foreign_tasks": ["send"], "max_foreign_tasks": 1}
    assert {"InternalTaskSubmitted", "WorkerRunsForeignTask"} <= {e["kind"] for e in trace}


def test_a_trace_with_a_foreign_task_is_conformant_at_queues_and_projected_to_black_box(classes: Path, tmp_path: Path) -> None:
    """The trace, with its header's environment, is valid input to both searches, and each finds a
    run the full replay accepts (at black-box the foreign task leaves no event of its own)."""
    record(classes, tmp_path, "foreign-task")
    trace = events(tmp_path / "foreign-task-5.3.3-queues")
    for level in (Observation.QUEUES, Observation.BLACK_BOX):
        projected = list(project(trace, level))
        header = header_from_record(projected[0])
        assert header.hidden_environment().foreign_tasks
        result = replay_partial(header, projected[1:], Budgets(steps=200_000, seconds=600))
        assert result.verdict == "conformant", (level, result.detail)
        (replayed,) = replay_records(witness_records(header, result))
        assert replayed.verdict == "conformant", replayed


@pytest.mark.spark
def test_a_configuration_changed_while_recording_is_refused_as_incomplete(
    classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The agent records no operator change: a trace whose header no longer describes the broker
    is refused, never judged."""
    record(classes, tmp_path, "config-change")
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "field 'recording_incomplete'" in err and "the broker's configuration changed while it was recorded" in err


@pytest.mark.spark
def test_a_trace_with_lost_events_is_refused_as_incomplete(classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A buffer of 4 events and a writer that starts only when the broker stops: the burst's events
    # cannot all be kept. (A writer 2 s late kept up on a loaded machine, where the JVM took longer
    # than that to reach the burst.)
    answers = record(classes, tmp_path, "overload", "buffer=4", "writer_start_delay_ms=600000")
    assert sum(answers.values()) == 8 and "[OVERLOAD]" in answers  # the broker answered as without the agent
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "overload-5.3.3-queues/part-00000.jsonl:1: field 'recording_incomplete'" in err and "events lost: the agent's buffer (4 events) was full" in err


@pytest.mark.spark
def test_a_failing_hook_never_reaches_the_broker_and_marks_the_trace(
    classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The third RequestArrives hook throws: the broker must still answer every request.
    answers = record(classes, tmp_path, "overload", "fault_after=2")
    assert sum(answers.values()) == 8 and "[OVERLOAD]" in answers
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "field 'recording_incomplete'" in err and "1 failures inside the agent's hooks" in err


def test_a_header_that_says_the_recording_is_incomplete_is_refused(tmp_path: Path) -> None:
    lines = (EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    complete = tmp_path / "complete.jsonl"
    complete.write_text("\n".join([json.dumps({**header, "recording_incomplete": None}), *lines[1:]]) + "\n")
    validate([str(complete)])
    incomplete = tmp_path / "incomplete.jsonl"
    incomplete.write_text("\n".join([json.dumps({**header, "recording_incomplete": "3 events lost"}), *lines[1:]]) + "\n")
    with pytest.raises(TraceInputError, match=r"incomplete.jsonl:1: field 'recording_incomplete'.*3 events lost"):
        validate([str(incomplete)])


def test_a_broker_that_never_stopped_cleanly_leaves_no_header(classes: Path, tmp_path: Path) -> None:
    """Without the shutdown hook's header the events are refused (an event before its header)."""
    record(classes, tmp_path, "overload")
    (tmp_path / "overload-5.3.3-queues" / "part-00000.jsonl").unlink()  # what a killed broker leaves
    with pytest.raises(TraceInputError, match="before"):
        validate([str(tmp_path)])


@pytest.mark.spark
def test_more_dispatching_threads_than_the_header_says_mark_the_trace(
    classes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The scenario dispatches on two threads; a header with io_threads=1 could not be replayed.
    record(classes, tmp_path, "overload", "io_threads=1")
    assert main(["check", str(tmp_path)]) == 2
    assert "more threads dispatch requests than the header's io_threads (1)" in capsys.readouterr().err


def test_an_unknown_level_stops_the_jvm_before_the_broker_starts(classes: Path, tmp_path: Path) -> None:
    """A misconfigured agent fails loudly at start, rather than record a trace no one asked for."""
    run = subprocess.run(
        ["java", f"-javaagent:{AGENT_JAR}=out={tmp_path},level=black-box", "-cp", str(classes), "flowspec.standin.Scenario", "steady"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0 and "level 'black-box' is not supported" in run.stderr
    assert not any(tmp_path.iterdir())
