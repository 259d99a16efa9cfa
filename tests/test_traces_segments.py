"""A long trace is replayed in segments on Spark, with the verdict of an unsegmented replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from traces.format.records import header_from_record
from traces.checking.layout import Unit, read_unit
from traces.checking.layout import plan as plan_layout
from traces.format.read import read_records
from traces.recording.record import record_workload
from traces.checking.replay import replay_records, replay_trace
from traces.recording.examples import EXAMPLES as EXAMPLES_DIR
from traces.checking.segments import FOLLOW_COST, _balanced_bounds, plan_jobs, plan_segments, replay_here, replay_on_spark


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
        plan = plan_segments({header.trace_id: len(events)}, {header.trace_id}, parallelism=2, min_events=100)
        assert len(plan) == 2
        [(trace_id, result)] = replay_on_spark(spark, plan_layout([path]), {header.trace_id: variant[0]}, plan).items()
        assert trace_id == header.trace_id
        assert result == replay_trace(header, variant[1:])
    assert result.verdict == "violation" and result.divergence is not None and result.divergence.seq == broken[i]["seq"]


@pytest.mark.spark
def test_a_trace_with_no_events_is_inconclusive_not_conformant(spark: SparkSession, tmp_path: Path) -> None:
    record_workload(tmp_path / "t.jsonl", "steady", "5.3.3", 20)
    records = [r.data for r in read_records([str(tmp_path / "t.jsonl")])]
    layout = plan_layout([_write(tmp_path, records[:1])])
    trace_id = records[0]["trace_id"]
    [(_, result)] = replay_on_spark(spark, layout, {trace_id: records[0]}, plan_segments({trace_id: 0}, {trace_id}, 2)).items()
    assert result.verdict == "inconclusive" and "no events" in result.reason


def _interleaved_and_split(tmp_path: Path) -> list[str]:
    """Three recorded traces: two interleaved row by row in one file, one split over two files;
    small row groups, so that traces span row groups."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    tables = []
    for i, workload in enumerate(("retry-storm", "slow-disk", "faults")):
        record_workload(tmp_path / f"{workload}.parquet", workload, "5.3.3", 400, seed=i)
        tables.append(pq.read_table(tmp_path / f"{workload}.parquet"))
    mixed = pa.concat_tables(tables[:2])
    mixed = mixed.take(pc.sort_indices(mixed, [("seq", "ascending"), ("trace_id", "ascending")]))
    out = tmp_path / "input"
    out.mkdir()
    pq.write_table(mixed, out / "a-mixed.parquet", row_group_size=64)
    half = tables[2].num_rows // 2
    pq.write_table(tables[2].slice(0, half), out / "b-first.parquet", row_group_size=64)
    pq.write_table(tables[2].slice(half), out / "c-second.parquet", row_group_size=64)
    return [str(out)]


def test_every_segment_is_in_one_job_with_the_pieces_that_hold_its_trace(tmp_path: Path) -> None:
    paths = _interleaved_and_split(tmp_path)
    layout = plan_layout(paths)
    events = {t: sum(1 for r in read_records(paths) if r.data["trace_id"] == t and r.data["seq"] > 0) for t in layout.trace_pieces}
    plan = plan_segments(events, set(events), parallelism=4, min_events=100)
    jobs = plan_jobs(layout, plan, cores=2)
    placed = [s for job in jobs for s in job.segments]
    assert sorted(placed, key=str) == sorted(plan, key=str)
    assert any(not (s.index == 0 and s.last) for s in plan), "the test needs a cut trace"
    for job in jobs:
        for s in job.segments:
            assert set(layout.trace_pieces[s.trace_id]) <= set(job.pieces)
    assert [job.cost for job in jobs] == sorted((job.cost for job in jobs), reverse=True)


@pytest.mark.spark
def test_traces_replay_on_spark_wherever_their_rows_are(spark: SparkSession, tmp_path: Path) -> None:
    paths = _interleaved_and_split(tmp_path)
    records = [r.data for r in read_records(paths)]
    expected = {r.trace_id: r for r in replay_records(records)}
    headers = {r["trace_id"]: r for r in records if r["seq"] == 0}
    events = {t: sum(1 for r in records if r["trace_id"] == t and r["seq"] > 0) for t in headers}
    for min_events in (10**9, 100):  # uncut, then the long traces cut
        plan = plan_segments(events, set(events), parallelism=4, min_events=min_events)
        assert replay_on_spark(spark, plan_layout(paths), headers, plan) == expected
        assert replay_here(plan_layout(paths), headers, plan) == expected  # the bench's plain-Python replay
    # The faults trace breaks a claim (the known stuck stamp of 5.3.3): findings survive the cuts too.
    assert {r.verdict for r in expected.values()} == {"conformant"}
    assert [f.claim for r in expected.values() for f in r.findings] == ["begin_time_is_zero_when_lock_is_free"]


def test_a_job_gives_each_result_when_its_trace_ends_and_drops_its_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job holding many traces keeps only the replays under way: a trace's result comes out before
    the pieces after its last row are read (a job of the 100M bench holds about 600 traces)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import traces.checking.segments as segments

    tables = []
    for i, workload in enumerate(("steady", "faults", "bursts")):
        record_workload(tmp_path / f"{workload}.parquet", workload, "5.3.3", 300, seed=i)
        tables.append(pq.read_table(tmp_path / f"{workload}.parquet"))
    pq.write_table(pa.concat_tables(tables), tmp_path / "back-to-back.parquet", row_group_size=50)
    paths = [str(tmp_path / "back-to-back.parquet")]
    records = [r.data for r in read_records(paths)]
    headers = {r["trace_id"]: r for r in records if r["seq"] == 0}
    events = {t: sum(1 for r in records if r["trace_id"] == t and r["seq"] > 0) for t in headers}
    layout = plan_layout(paths)
    [job] = plan_jobs(layout, plan_segments(events, set(events), parallelism=1), cores=1)
    reads: list[Unit] = []

    def counted_read(unit: Unit, *args: Any, **kwargs: Any) -> pa.Table:
        reads.append(unit)
        return read_unit(unit, *args, **kwargs)

    monkeypatch.setattr(segments, "read_unit", counted_read)
    order, pieces_read = [], []
    for trace_id, _, result in segments.run_job(job, headers):
        order.append(trace_id)
        pieces_read.append(len(reads))
        assert result == replay_trace(header_from_record(headers[trace_id]), [r for r in records if r["trace_id"] == trace_id and r["seq"] > 0])
    assert order == [t.column("trace_id")[0].as_py() for t in tables]  # in the order the traces end
    last_piece = {t: max(layout.pieces.index(p) for p in layout.trace_pieces[t]) + 1 for t in headers}
    # Each result before any piece past its trace's last (a violation comes out where it is found).
    assert all(n <= last_piece[t] for t, n in zip(order, pieces_read)) and pieces_read[0] < len(layout.pieces)


def test_the_plain_python_replay_of_cut_traces_gives_the_unsegmented_verdicts(tmp_path: Path) -> None:
    """replay_here runs the Spark replay's jobs in this process (no Spark): every row goes to its
    trace's open segment, a segment after the first follows the rows before it, and a divergence
    carries its row's record, as an unsegmented replay gives them."""
    from traces.format.write import TraceWriter

    paths = _interleaved_and_split(tmp_path)
    records = [r.data for r in read_records(paths)]
    # Two more traces interleaved row by row in one file: a long one, and a short one whose early
    # event lacks the answer it writes (a divergence), so that its segment closes while the long
    # one's rows are still coming in the same rows read.
    record_workload(tmp_path / "long.jsonl", "bursts", "5.3.3", 600, seed=5)
    record_workload(tmp_path / "broken.jsonl", "steady", "5.3.3", 300, seed=7)
    long, broken = ([r.data for r in read_records([str(tmp_path / f"{name}.jsonl")])] for name in ("long", "broken"))
    i = next(i for i, r in enumerate(broken) if r["seq"] > 20 and r.get("responses"))
    del broken[i]["responses"]
    records += long + broken
    with TraceWriter(tmp_path / "mixed", row_group=10_000) as w:
        w.write_all(sorted(long + broken, key=lambda r: (r["seq"], r["trace_id"])))
    paths.append(str(tmp_path / "mixed"))
    expected = {r.trace_id: r for r in replay_records(records)}
    assert expected[broken[0]["trace_id"]].divergence is not None and expected[long[0]["trace_id"]].verdict == "conformant"
    headers = {r["trace_id"]: r for r in records if r["seq"] == 0}
    events = {t: sum(1 for r in records if r["trace_id"] == t and r["seq"] > 0) for t in headers}
    for min_events in (10**9, 100):  # uncut, then the long traces cut
        plan = plan_segments(events, set(events), parallelism=4, min_events=min_events)
        assert len(plan) > len(headers) or min_events > 100
        assert replay_here(plan_layout(paths), headers, plan) == expected


def test_an_error_inside_a_segments_replay_names_the_trace_and_event() -> None:
    """An exception while replaying an event is the checker's failure (exit 4), not a verdict: it
    names the trace and the event's seq."""
    import pyarrow as pa

    from traces.checking.exits import CheckerFailure
    from traces.checking.replay import SegmentReplay, feed_segments
    from traces.format.records import ARROW_SCHEMA, EVENT_COLUMNS, EventColumns

    rows = [{"trace_id": "other", "seq": 1, "ts": 1, "kind": "ClockAdvances", "ms": 1},
                            {"trace_id": "t", "seq": 7, "ts": 1, "kind": "ClockAdvances", "ms": 1}]
    table = pa.Table.from_pylist([{c: r.get(c) for c in EVENT_COLUMNS} for r in rows],
                                 schema=pa.schema([ARROW_SCHEMA.field(c) for c in EVENT_COLUMNS]))

    class Failing(SegmentReplay):
        def take(self, *args: Any) -> bool:
            raise ValueError("boom")

    header = header_from_record(json.loads((EXAMPLES_DIR / "conformant-5.3.3.jsonl").read_text().splitlines()[0]))
    with pytest.raises(CheckerFailure) as failed:
        list(feed_segments(EventColumns(table), {"t": (10, Failing(header, 1))}))
    assert failed.value.message == "trace 't', event seq 7: ValueError: boom"
