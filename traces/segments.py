"""The replay on Spark: every trace through the spec, long traces cut into segments that run in parallel.

A trace's replay is sequential: each event is judged in the state its predecessors left. To use
more than one core on one long trace, it is cut into segments and each segment gets a worker
that *follows* every event before the segment (the spec's step only; no comparisons, no
claims) and then *checks* its own events in full (:func:`traces.replay.replay_segment`). The
driver merges the segments' results in order (:func:`traces.replay.merge_segments`): the first
divergence decides. Following is exact, so a segmented replay gives the unsegmented verdict
(``tests/test_traces_replay.py`` compares them on every example and cut).

Following costs about half of checking (:data:`FOLLOW_COST`), so later segments are made shorter
than earlier ones, to give every worker the same work. This also bounds the gain: however many
cores, one trace is replayed at most ``1 / FOLLOW_COST`` times faster than on one core; many
traces scale with the cores. Only a trace longer than its fair share of the dataset
(events / parallelism) is cut, and into at most ``parallelism`` segments, since following is
work a single-segment replay does not do.

Placement: each segment is one Spark partition, chosen explicitly (hash partitioning by a
key picked so that segment *i* lands in partition *i mod n*), so two segments of one trace never
share a core by a hash collision. Within a partition the worker streams the rows in ``seq``
order (``mapInArrow``): it holds one record batch at a time, never a whole trace.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from traces.format import HEADER_COLUMNS, header_from_record
from traces.replay import Divergence, ReplayResult, merge_segments, replay_segment

#: CPU time of following an event / of checking it: 0.40–0.57 on this machine (30 000- and
#: 300 000-event traces; the machine is noisy), measured with
#: ``flowspec record --workload retry-storm --events 30000 --profile 5.3.3 --out /tmp/s.jsonl`` and
#: ``python -m traces.segments /tmp/s.jsonl``.
FOLLOW_COST = 0.5
#: A trace shorter than this is never cut: the saving would not pay for a partition.
MIN_SEGMENT_EVENTS = 50_000


@dataclass(frozen=True)
class Segment:
    """Events ``first_seq <= seq < end_seq`` of one trace, checked by one worker (which follows those before)."""

    trace_id: str
    index: int
    first_seq: int
    end_seq: int
    last: bool


def _balanced_bounds(events: int, segments: int) -> list[int]:
    """First seqs of ``segments`` segments of a trace, so that following plus checking is the same work in each.

    A worker starting at ``b`` with length ``L`` costs ``FOLLOW_COST * b + L``; equal costs ``c``
    give ``b[k+1] = b[k] * (1 - FOLLOW_COST) + c`` with ``b[0] = 0``, and ``b[segments] = events``
    fixes ``c``.
    """
    f = FOLLOW_COST
    c = events * f / (1 - (1 - f) ** segments)
    bounds, b = [], 0.0
    for _ in range(segments):
        bounds.append(1 + round(b))
        b = b * (1 - f) + c
    return bounds


def plan_segments(
    events_per_trace: Mapping[str, int], replayable: Iterable[str], parallelism: int, min_events: int = MIN_SEGMENT_EVENTS
) -> list[Segment]:
    """The segments of every trace: one per trace, except long replayable ones (see the module docstring)."""
    replayable = set(replayable)
    share = sum(events_per_trace.values()) / max(parallelism, 1)
    plan: list[Segment] = []
    for trace_id in sorted(events_per_trace):
        n = events_per_trace[trace_id]
        count = 1
        if trace_id in replayable and n >= min_events and n > share:
            count = min(parallelism, math.ceil(n / share))
        bounds = _balanced_bounds(n, count) + [n + 1]
        plan += [
            Segment(trace_id, i, first, end, last=i == count - 1)
            for i, (first, end) in enumerate(itertools.pairwise(bounds))
        ]
    return plan


def _partition_keys(spark: SparkSession, partitions: int, wanted: int) -> list[int]:
    """``wanted`` distinct keys; key *i* lands in partition *i mod partitions* under ``repartition(partitions, key)``.

    Spark's hash partitioning is ``pmod(hash(key), partitions)``; asking Spark for the hashes
    of the first few thousand integers finds a key for every partition.
    """
    per_partition: dict[int, list[int]] = {p: [] for p in range(partitions)}
    need = math.ceil(wanted / partitions)
    span = 64 * partitions * need
    for row in spark.range(span).select("id", F.expr(f"pmod(hash(id), {partitions})").alias("p")).collect():
        keys = per_partition[row["p"]]
        if len(keys) < need:
            keys.append(row["id"])
    if any(len(keys) < need for keys in per_partition.values()):
        raise RuntimeError(f"no {need} keys for each of {partitions} partitions among the first {span} integers")
    return [per_partition[i % partitions][i // partitions] for i in range(wanted)]


_RESULT_ARROW = pa.schema(
    [
        ("slot", pa.int64()),
        ("result", pa.string()),  # the segment's ReplayResult as JSON
    ]
)


def _result_json(result: ReplayResult) -> str:
    return json.dumps(asdict(result))


def _result_from_json(text: str) -> ReplayResult:
    data = json.loads(text)
    divergence = data.pop("divergence")
    data["actions"] = tuple((kind, n) for kind, n in data["actions"])
    return ReplayResult(**data, divergence=None if divergence is None else Divergence(**divergence))


def _replay_partition(headers: Mapping[str, dict[str, Any]], segments: Mapping[int, Segment]) -> Any:
    """The function ``mapInArrow`` runs on one partition: rows sorted by (slot, seq), one segment per slot."""

    def rows(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[int, dict[str, Any]]]:
        for batch in batches:
            for record in batch.to_pylist():
                yield record.pop("slot"), record  # the record as the trace has it (a divergence quotes it)

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for slot, group in itertools.groupby(rows(batches), key=lambda item: item[0]):
            segment = segments[slot]
            header = header_from_record(headers[segment.trace_id])
            result = replay_segment(header, (record for _, record in group), segment.first_seq, segment.last)
            yield pa.RecordBatch.from_pylist([{"slot": slot, "result": _result_json(result)}], schema=_RESULT_ARROW)

    return run


def replay_on_spark(
    spark: SparkSession, events: DataFrame, headers: Mapping[str, dict[str, Any]], plan: Sequence[Segment]
) -> dict[str, ReplayResult]:
    """Replay every trace of ``events`` (no header rows) as ``plan`` cuts them; one merged result per trace."""
    parallelism = spark.sparkContext.defaultParallelism
    partitions = max(1, min(len(plan), 4 * parallelism))
    keys = _partition_keys(spark, partitions, len(plan))
    by_slot = {key: segment for key, segment in zip(keys, plan)}
    plan_frame = spark.createDataFrame(
        [(s.trace_id, key, s.end_seq) for key, s in by_slot.items()], "trace_id string, slot bigint, end_seq bigint"
    )
    columns = [c for c in events.columns if c not in HEADER_COLUMNS]
    rows = (
        events.select(*columns)
        .join(F.broadcast(plan_frame), "trace_id")
        .where(F.col("seq") < F.col("end_seq"))
        .drop("end_seq")
        .repartition(partitions, "slot")
        .sortWithinPartitions("slot", "seq")
    )
    results: dict[str, list[tuple[int, ReplayResult]]] = {}
    for row in rows.mapInArrow(_replay_partition(headers, by_slot), "slot bigint, result string").collect():
        segment = by_slot[row["slot"]]
        results.setdefault(segment.trace_id, []).append((segment.index, _result_from_json(row["result"])))
    merged: dict[str, ReplayResult] = {}
    for trace_id, segments in itertools.groupby(sorted(plan, key=lambda s: (s.trace_id, s.index)), key=lambda s: s.trace_id):
        expected = [s.index for s in segments]
        parts = sorted(results.get(trace_id, []), key=lambda part: part[0])
        if [index for index, _ in parts] != expected:
            # A segment with no rows sends no result; a verdict without it would skip its events.
            missing = sorted(set(expected) - {index for index, _ in parts})
            merged[trace_id] = ReplayResult(trace_id, "inconclusive", 0, reason=f"no events to replay in segment(s) {missing}")
        else:
            merged[trace_id] = merge_segments([r for _, r in parts])
    return merged


def _measure_follow_cost(path: str) -> None:
    """Print the CPU time of following and of checking every event of a trace (for FOLLOW_COST)."""
    import time

    from traces.read import read_records

    records = [r.data for r in read_records([path])]
    header, events = header_from_record(records[0]), records[1:]
    cpu = {}
    for label, first_seq in (("follow", len(events) + 1), ("check", 1)):
        start = time.process_time()
        replay_segment(header, events, first_seq, last=True)
        cpu[label] = time.process_time() - start
    print(f"{len(events)} events: follow {cpu['follow']:.2f} s, check {cpu['check']:.2f} s, ratio {cpu['follow'] / cpu['check']:.2f}")


if __name__ == "__main__":
    import sys

    _measure_follow_cost(sys.argv[1])
