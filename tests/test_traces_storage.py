"""Traces in object storage: ``flowspec record --out s3://…`` and ``flowspec check s3://…`` against
an S3-compatible server on 127.0.0.1 (moto's, tests/servers.py), judged as the same traces on local
disk are; and input that cannot be opened, by the driver or by a Spark task, is invalid input
naming the file (and the task's node), never a traceback."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from servers import flowspec, s3_env
from traces.cli import main
from traces.format.storage import joined, location, trace_files
from traces.recording.examples import EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Each recording: (workload, events, traces, where in the bucket): a Parquet dataset and a JSON Lines file.
RECORDINGS = [("retry-storm", 300, 2, "storm"), ("slow-disk", 200, 1, "one/slow-disk.jsonl")]


def test_locations_are_absolute_paths_or_uris_whose_query_every_file_keeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert location("a/b.jsonl") == str(tmp_path / "a" / "b.jsonl") and location("file:///x/y.jsonl") == "/x/y.jsonl"
    assert location("s3://bucket/p") == "s3://bucket/p"
    assert joined("s3://bucket/p/?scheme=http", "part-00000.parquet") == "s3://bucket/p/part-00000.parquet?scheme=http"
    (tmp_path / "d" / "sub").mkdir(parents=True)
    for name in ("d/b.jsonl", "d/sub/a.parquet", "d/notes.txt"):
        (tmp_path / name).write_text("")
    assert trace_files("d") == [str(tmp_path / "d" / "b.jsonl"), str(tmp_path / "d" / "sub" / "a.parquet")]
    assert trace_files("d/*.txt") == [str(tmp_path / "d" / "notes.txt")]  # a file named is read, whatever its suffix
    assert trace_files("d/nothing") is None and trace_files("x*") is None


@pytest.mark.spark
@pytest.mark.slow
def test_traces_recorded_to_s3_are_judged_as_the_same_traces_on_local_disk(
    spark: SparkSession, bucket: str, s3_endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env, remote_dir = s3_env(s3_endpoint), f"{bucket}/recorded"
    for workload, events, traces, name in RECORDINGS:
        for out in (f"{remote_dir}/{name}", str(tmp_path / name)):
            recorded = flowspec(["record", "--workload", workload, "--events", str(events), "--traces", str(traces), "--out", out], env, tmp_path)
            assert recorded.returncode == 0, recorded.stderr
    remote = flowspec(["check", remote_dir, "--json"], env, tmp_path)
    assert main(["check", str(tmp_path), "--json"]) == remote.returncode == 0, remote.stderr[-3000:]
    local = json.loads(capsys.readouterr().out)
    assert json.loads(remote.stdout) == local
    assert {t["trace_id"] for t in local["traces"]} == {"retry-storm-5.3.3-0", "retry-storm-5.3.3-1", "slow-disk-5.3.3-0"}


def test_a_missing_bucket_or_key_is_invalid_input_naming_it(bucket: str, s3_endpoint: str, tmp_path: Path) -> None:
    env = s3_env(s3_endpoint)
    checked = flowspec(["check", f"{bucket}/absent", "s3://no-such-bucket/traces", "--json"], env, tmp_path)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert json.loads(checked.stdout)["invalid_input"] == [
        {"file": f"{bucket}/absent", "message": "no such file or directory"},
        {"file": "s3://no-such-bucket/traces", "message": "no such file or directory"},
    ]
    recorded = flowspec(["record", "--workload", "steady", "--events", "20", "--out", "s3://no-such-bucket/t.jsonl"], env, tmp_path)
    assert recorded.returncode == 2 and recorded.stderr.startswith("flowspec record: s3://no-such-bucket/t.jsonl: cannot be written: ")


@pytest.mark.spark
def test_a_file_a_task_cannot_open_is_invalid_input_naming_the_file_and_the_node(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The driver validated the input, then the file is gone when a task opens it (a node that
    does not mount it, say): exit 2, the file and the node named, no traceback, no verdict."""
    import traces.checking.check as check
    from traces.checking.layout import plan

    trace = tmp_path / "t.jsonl"
    trace.write_bytes((EXAMPLES / "conformant-4.3.2.jsonl").read_bytes())

    def planned_then_gone(paths: list[str]) -> object:
        layout = plan(paths)
        trace.unlink()
        return layout

    monkeypatch.setattr(check, "plan_layout", planned_then_gone)
    assert main(["check", str(trace), "--json"]) == 2
    captured = capsys.readouterr()
    [problem] = json.loads(captured.out)["invalid_input"]
    assert problem["file"] == str(trace) and problem["node"] == socket.gethostname()
    assert problem["message"].startswith(f"cannot be read on node {socket.gethostname()}: ")
    assert f"{trace}: cannot be read on node" in captured.err and "Traceback" not in captured.err
