"""A long trace is replayed in segments on Spark, with the verdict of an unsegmented replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from traces.check import load
from traces.format import HEADER_KIND, header_from_record
from traces.read import read_records
from traces.record import record_workload
from traces.replay import replay_trace
from traces.segments import FOLLOW_COST, _balanced_bounds, plan_segments, replay_on_spark


def test_long_traces_are_cut_so_every_worker_does_the_same_work() -> None:
    plan = plan_segments({"long": 90_000, "short": 10_000}, {"long", "short"}, parallelism=2, min_events=1_000)
    long = [s for s in plan if s.trace_id == "long"]
    assert [s.index for s in long] == [0, 1] and [s.trace_id for s in plan].count("short") == 1
    assert long[0].first_seq == 1 and long[0].end_seq == long[1].first_seq and long[1].end_seq == 90_001
    assert [s.last for s in long] == [False, True]
    costs = [FOLLOW_COST * (s.first_seq - 1) + (s.end_seq - s.first_seq) for s in long]
    assert max(costs) - min(costs) <= 2, costs
    assert _balanced_bounds(1000, 1) == [1]


def test_short_traces_and_traces_that_cannot_be_replayed_are_not_cut() -> None:
    assert len(plan_segments({"a": 40_000, "b": 40_000}, {"a", "b"}, parallelism=2, min_events=1_000)) == 2
    assert len(plan_segments({"a": 90_000}, set(), parallelism=2, min_events=1_000)) == 1
    assert len(plan_segments({"a": 900}, {"a"}, parallelism=2, min_events=1_000)) == 1


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> str:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.mark.spark
def test_segments_on_spark_give_the_unsegmented_verdict(spark: SparkSession, tmp_path: Path) -> None:
    record_workload(tmp_path / "storm.jsonl", "retry-storm", "5.3.3", 600)
    records = [r.data for r in read_records([str(tmp_path / "storm.jsonl")])]
    header, events = header_from_record(records[0]), records[1:]
    i = next(i for i, r in enumerate(records) if r["kind"] == "WorkerAcquiresPutLock" and r["seq"] > 0.8 * len(events))
    broken = [dict(r) for r in records]
    broken[i]["kind"] = "WorkerTakesTask"  # late, so that the last segment holds it
    for variant in (records, broken):
        path = _write(tmp_path, variant)
        frame = load(spark, [path]).where(F.col("kind") != HEADER_KIND)
        plan = plan_segments({header.trace_id: len(events)}, {header.trace_id}, parallelism=2, min_events=100)
        assert len(plan) == 2
        [(trace_id, result)] = replay_on_spark(spark, frame, {header.trace_id: variant[0]}, plan).items()
        assert trace_id == header.trace_id
        assert result == replay_trace(header, variant[1:])
    assert result.verdict == "violation" and result.divergence is not None and result.divergence.seq == broken[i]["seq"]


@pytest.mark.spark
def test_a_trace_with_no_events_is_inconclusive_not_conformant(spark: SparkSession, tmp_path: Path) -> None:
    record_workload(tmp_path / "t.jsonl", "steady", "5.3.3", 20)
    records = [r.data for r in read_records([str(tmp_path / "t.jsonl")])]
    frame = load(spark, [_write(tmp_path, records[:1])]).where(F.col("kind") != HEADER_KIND)
    trace_id = records[0]["trace_id"]
    [(_, result)] = replay_on_spark(spark, frame, {trace_id: records[0]}, plan_segments({trace_id: 0}, {trace_id}, 2)).items()
    assert result.verdict == "inconclusive" and "no events" in result.reason
