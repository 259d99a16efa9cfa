"""``flowspec check`` exit codes and outputs: 0 conformant, 1 violation, 2 invalid input, 3
inconclusive, 4 a failure of the checker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from traces.checking.exits import CheckerFailure, checker_failure_message
from traces.cli import main
from traces.recording.examples import EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.mark.spark
def test_invalid_input_exits_2_naming_only_the_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.jsonl").write_text('{"trace_id": "t", "seq": 0,\n')
    assert main(["check", str(EXAMPLES / "conformant-5.3.3.jsonl"), str(tmp_path / "bad.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1: malformed JSON" in err and "conformant-5.3.3" not in err


@pytest.mark.spark
def test_invalid_input_with_json_prints_the_problems_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.jsonl").write_text('{"trace_id": "t", "seq": 0,\n')
    assert main(["check", str(tmp_path / "bad.jsonl"), str(tmp_path / "absent.jsonl"), "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == 2
    assert data["invalid_input"] == [{"file": str(tmp_path / "absent.jsonl"), "message": "no such file or directory"}]
    assert main(["check", str(tmp_path / "bad.jsonl"), "--json"]) == 2
    [problem] = json.loads(capsys.readouterr().out)["invalid_input"]
    assert problem["file"] == str(tmp_path / "bad.jsonl") and problem["line"] == 1 and "malformed JSON" in problem["message"]


@pytest.mark.spark
def test_wrong_profile_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "conformant-4.9.8.jsonl"), "--profile", "5.3.3"]) == 2
    assert "claims profile 4.9.8" in capsys.readouterr().err


def test_a_failure_of_the_checker_exits_4_with_one_message(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import traces.cli

    def crash(args: object) -> int:
        raise CheckerFailure("t-1", ZeroDivisionError("float division by zero"), seq=7)

    monkeypatch.setattr(traces.cli, "_check", crash)
    assert main(["check", str(EXAMPLES / "conformant-4.3.2.jsonl"), "--json"]) == 4
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"exit_code": 4, "checker_failure": "trace 't-1', event seq 7: ZeroDivisionError: float division by zero"}
    assert "the checker failed, no verdict: trace 't-1', event seq 7" in captured.err and "Traceback" not in captured.err


def test_record_writes_a_valid_trace(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    assert main(["record", "--workload", "bursts", "--events", "50", "--profile", "4.3.2", "--out", str(out)]) == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["profile"] == "4.3.2" and header["implementation"] == "flowspec-reference"


@pytest.mark.spark
def test_conformant_exits_0_and_writes_json_and_a_report(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.html"
    assert main(["check", str(EXAMPLES / "conformant-4.3.2.jsonl"), "--json", "--report", str(report)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["conformant"] == 1 and data["exit_code"] == 0
    page = report.read_text()
    assert page.count("<svg") >= 3 and "queue depth per queue" in page and "http" not in page.replace("http://www.w3", "")


@pytest.mark.spark
def test_violation_exits_1_with_a_sample(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "broken-no_queue_over_capacity.jsonl"), "--no-replay"]) == 1
    out = capsys.readouterr().out
    assert "VIOLATION" in out and "! no_queue_over_capacity at seq" in out and "raw: {" in out


@pytest.mark.spark
def test_a_replay_divergence_is_shown_with_its_raw_record(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "broken-lock_held_by_one_writer_at_a_time.jsonl"), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    [trace] = data["traces"]
    [replay] = [f for f in trace["findings"] if f["rule"] == "replay"]
    assert replay["status"] == "violation"
    raw = json.loads(replay["sample"][0]["raw"])
    assert raw["seq"] == replay["sample"][0]["seq"] and raw["kind"] == "HaServiceAcquiresPutLock"


@pytest.mark.spark
def test_a_known_defect_of_the_release_is_reported_and_the_replay_conforms(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    """5.3.3's stuck beginTimeInLock after an exception inside the lock is 5.3.3's own behaviour: the
    replay follows the trace to its end and the rule that checks the claim reports the defect as
    the release's: the trace conforms and the check exits 0."""
    assert main(["check", str(EXAMPLES / "faults-5.3.3.jsonl"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["with_known_defects"] == 1
    [trace] = data["traces"]
    assert trace["verdict"] == "conformant"
    [rule] = [f for f in trace["findings"] if f["rule"] == "begin_time_zero_when_lock_free"]
    assert rule["status"] == "known defect" and rule["violations"] > 0 and "known defect of release 5.3.3" in rule["note"]
    [replay] = [f for f in trace["findings"] if f["rule"] == "replay"]
    assert replay["status"] == "pass"
    assert [s["detail"].split(" (")[0] for s in replay["sample"]] == ["known defect of the release: begin_time_is_zero_when_lock_is_free"]


@pytest.mark.spark
@pytest.mark.parametrize(("level", "search"), [("queues", "partial replay at 'queues'"), ("black-box", "partial replay at 'black-box', witness-first search")])
def test_a_projected_trace_is_checked_by_search_and_its_witness_is_a_full_trace_that_conforms(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str, search: str
) -> None:
    full, partial, witness = tmp_path / "full.jsonl", tmp_path / "partial.jsonl", tmp_path / "witness"
    assert main(["record", "--workload", "slow-disk", "--events", "300", "--profile", "4.9.8", "--out", str(full)]) == 0
    assert main(["project", str(full), "--level", level, "--out", str(partial)]) == 0
    assert main(["check", str(partial), "--witness", str(witness), "--json"]) == 0
    [trace] = json.loads(capsys.readouterr().out.split("\n", 2)[-1])["traces"]
    [replay] = [f for f in trace["findings"] if f["rule"] == "replay"]
    assert replay["status"] == "pass" and search in replay["note"] and "witness run" in replay["note"]
    [written] = witness.iterdir()
    assert json.loads(written.read_text().splitlines()[0])["observation"] == "full"
    assert main(["check", str(written)]) == 0
    assert main(["project", str(partial), "--level", "black-box", "--out", str(tmp_path / "bb.jsonl")]) == 0
    assert main(["project", str(partial), "--level", level, "--out", str(tmp_path / "same.jsonl")]) == 0


@pytest.mark.spark
def test_a_clean_trace_that_cannot_be_judged_exits_3_not_1(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "conformant-4.3.2.jsonl"), "--no-replay"]) == 3
    assert "INCONCLUSIVE" in capsys.readouterr().out


@pytest.mark.spark
def test_a_task_failure_reaches_the_driver_naming_trace_event_and_cause(spark: SparkSession) -> None:
    def fail(_: object) -> object:
        raise CheckerFailure("trace-9", OverflowError("int too large to convert to float"), seq=42)

    with pytest.raises(Exception) as caught:
        spark.sparkContext.parallelize([1], 1).map(fail).collect()
    assert checker_failure_message(caught.value) == "trace 'trace-9', event seq 42: OverflowError: int too large to convert to float"


@pytest.mark.spark
def test_the_console_puts_the_summary_first_and_tables_only_when_asked(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(EXAMPLES / n) for n in ("conformant-4.3.2.jsonl", "conformant-4.9.8.jsonl", "conformant-5.3.3.jsonl", "broken-no_queue_over_capacity.jsonl")]
    junit = tmp_path / "junit.xml"
    assert main(["check", *paths, "--no-replay", "--junit-xml", str(junit)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("4 traces, ") and "1 violation" in out[0] and "(exit 1)" in out[0]
    assert any(line.startswith("  broken-no_queue_over_capacity: no_queue_over_capacity at seq ") for line in out)
    assert not any(line.startswith("trace ") for line in out), "per-trace tables need --verbose above 3 traces"
    assert main(["check", *paths, "--no-replay", "--verbose"]) == 1
    assert sum(line.startswith("trace ") for line in capsys.readouterr().out.splitlines()) == 4

    from xml.etree import ElementTree

    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "4" and suite.get("failures") == "1" and suite.get("skipped") == "3"
    [failure] = suite.iter("failure")
    assert failure.get("type") == "no_queue_over_capacity" and "seq " in (failure.get("message") or "")


@pytest.mark.spark
def test_the_report_tells_the_busy_answers_apart_per_topic_with_time_in_ms(spark: SparkSession, tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    assert main(["check", str(EXAMPLES / "conformant-retry-storm-limited.jsonl"), "--report", str(report)]) == 0
    page = report.read_text()
    assert "answers by kind" in page and "[RateLimit]" in page and "SUCCESS" in page
    assert "answers per topic" in page and "%RETRY%get-pugc-to-ai-consumer" in page and "TopicOrders" in page
    assert "0 ms (ts " in page and "ts 1 " not in page.replace("(ts 1)", "")
