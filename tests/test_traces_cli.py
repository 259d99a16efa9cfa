"""``flowspec check`` exit codes and outputs: 0 conformant, 1 violation, 2 invalid input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from traces.cli import main
from traces.recording.examples import EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_invalid_input_exits_2_without_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.jsonl").write_text('{"trace_id": "t", "seq": 0,\n')
    assert main(["check", str(EXAMPLES / "conformant-5.3.3.jsonl"), str(tmp_path / "bad.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1: malformed JSON" in err and "conformant-5.3.3" not in err


def test_wrong_profile_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "conformant-4.9.8.jsonl"), "--profile", "5.3.3"]) == 2
    assert "claims 4.9.8" in capsys.readouterr().err


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
    replay follows the trace to its end and reports the defect as the release's."""
    assert main(["check", str(EXAMPLES / "faults-5.3.3.jsonl"), "--json"]) == 1  # the scan rule still flags it
    [trace] = json.loads(capsys.readouterr().out)["traces"]
    [replay] = [f for f in trace["findings"] if f["rule"] == "replay"]
    assert replay["status"] == "pass"
    assert [s["detail"].split(" (")[0] for s in replay["sample"]] == ["known defect of the release: begin_time_is_zero_when_lock_is_free"]


@pytest.mark.spark
def test_a_projected_trace_is_checked_by_search_and_its_witness_is_a_full_trace_that_conforms(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full, queues, witness = tmp_path / "full.jsonl", tmp_path / "queues.jsonl", tmp_path / "witness"
    assert main(["record", "--workload", "slow-disk", "--events", "300", "--profile", "4.9.8", "--out", str(full)]) == 0
    assert main(["project", str(full), "--level", "queues", "--out", str(queues)]) == 0
    assert main(["check", str(queues), "--witness", str(witness), "--json"]) == 0
    [trace] = json.loads(capsys.readouterr().out.split("\n", 2)[-1])["traces"]
    [replay] = [f for f in trace["findings"] if f["rule"] == "replay"]
    assert replay["status"] == "pass" and "partial replay at 'queues'" in replay["note"] and "witness run" in replay["note"]
    [written] = witness.iterdir()
    assert json.loads(written.read_text().splitlines()[0])["observation"] == "full"
    assert main(["check", str(written)]) == 0
    assert main(["project", str(queues), "--level", "black-box", "--out", str(tmp_path / "bb.jsonl")]) == 0
    assert main(["project", str(queues), "--level", "queues", "--out", str(tmp_path / "same.jsonl")]) == 0
