"""The events around a violation, so that a reader of the report sees what led to it.

A finding's sample names one event (its ``seq``) and carries that event's raw record. What an
operator needs next is what happened just before and after: the requests that filled the queue,
the fast-failure run that cleaned it, the put that held the lock. After the rules and the replay,
:func:`events_around` reads, for each trace with a sampled event, the pieces that hold it (one
Spark task a run of traces, like the partial replay: :meth:`traces.checking.layout.Layout.runs`) and keeps
the records within :data:`RADIUS` of each sampled ``seq``. The driver collects only those records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from traces.checking.layout import Layout, Unit, read_unit
from traces.format.records import EVENT_COLUMNS, HEADER_KIND, record_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Events shown on each side of a sampled event.
RADIUS = 4


def events_around(
    spark: SparkSession, layout: Layout, wanted: Mapping[str, Sequence[int]], radius: int = RADIUS
) -> dict[str, dict[int, list[tuple[int, str]]]]:
    """For each trace and each of its ``wanted`` seqs, the events whose seq is within ``radius``
    of it, as (seq, raw record) in seq order."""
    seqs_of = {trace_id: sorted(set(seqs)) for trace_id, seqs in wanted.items() if seqs}
    runs = layout.runs(seqs_of, spark.sparkContext.defaultParallelism)
    if not runs:
        return {}

    def run(part: Iterable[Unit]) -> Iterator[tuple[str, dict[int, list[tuple[int, str]]]]]:
        for unit in part:
            table = read_unit(unit, EVENT_COLUMNS)
            for trace_id in sorted(unit.traces or ()):
                yield trace_id, _windows(table, trace_id, seqs_of[trace_id], radius)

    return dict(spark.sparkContext.parallelize(runs, len(runs)).mapPartitions(run).collect())


def _windows(table: pa.Table, trace_id: str, seqs: list[int], radius: int) -> dict[int, list[tuple[int, str]]]:
    """The records of ``trace_id`` in ``table`` (its run's rows) around each of ``seqs`` (header rows left out)."""
    table = table.filter(pc.equal(table.column("trace_id"), pa.scalar(trace_id)))
    seq = np.asarray(table.column("seq").to_numpy(zero_copy_only=False), dtype=np.int64)
    near = np.zeros(len(seq), bool)
    for s in seqs:
        near |= np.abs(seq - s) <= radius
    rows = [r for r in table.filter(near).to_pylist() if r["kind"] != HEADER_KIND]
    rows.sort(key=lambda r: int(r["seq"]))
    return {s: [(int(r["seq"]), record_text(r)) for r in rows if abs(int(r["seq"]) - s) <= radius] for s in seqs}
