"""The replay on Spark: every trace through the spec, long traces cut into segments that run in parallel.

A trace's replay is sequential: each event is judged in the state its predecessors left. To use
more than one core on one long trace, it is cut into segments and each segment gets a worker
that *follows* every event before the segment (the spec's step only; no comparisons, no
claims) and then *checks* its own events in full (:func:`traces.checking.replay.replay_segment`). The
driver merges the segments' results in order (:func:`traces.checking.replay.merge_segments`): the first
divergence decides. Following is exact, so a segmented replay gives the unsegmented verdict
(``tests/test_traces_replay.py`` compares them on every example and cut).

Following costs about 0.7 of checking (:data:`FOLLOW_COST`), so later segments are made shorter
than earlier ones, to give every worker the same work. This also bounds the gain: however many
cores, one trace is replayed at most ``1 / FOLLOW_COST`` times faster than on one core; many
traces scale with the cores. Only a trace longer than its fair share of the dataset
(events / parallelism) is cut, and into at most ``parallelism`` segments, since following is
work a single-segment replay does not do.

Placement, without a shuffle: the driver knows where every trace's rows are
(:mod:`traces.checking.layout`). The uncut traces are replayed in runs of about equal work, in input
order, a few per core (:func:`plan_jobs`); each segment of a cut trace is a task of its own, which
reads only the pieces holding that trace. A task is one Spark partition (``parallelize``), so
two segments never share a core while another is idle, and Spark starts the costliest first. The
worker reads one piece (a Parquet row group) at a time and feeds its rows to the segments: it
holds one piece and the states of the segments under way, never a whole trace; a segment's
result leaves the task as soon as its trace ends there.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from traces.format.records import EVENT_COLUMNS, HEADER_KIND, REPEATED_STRINGS, EventColumns, header_from_record
from traces.checking.layout import Layout, Piece, Unit, read_unit
from traces.checking.replay import ClaimFinding, Divergence, ReplayResult, SegmentReplay, feed_segments, merge_segments

#: CPU time of following an event / of checking it, in a replay task (reading and decoding
#: included) with the compiled spec the workers run. It depends on the workload and on this noisy
#: machine: 0.69–0.89 over the eight base traces ``make bench`` records in ``out/bench/base``, in
#: six runs of ``PYTHONSAFEPATH=1 PYTHONPATH=build/compiled-spec python -m traces.checking.segments PATH``.
FOLLOW_COST = 0.7
#: A trace shorter than this is never cut: the saving would not pay for a partition.
MIN_SEGMENT_EVENTS = 50_000
#: Tasks per core for the uncut traces: Spark gives the next task to the first free core, so a
#: few tasks per core keep both busy to the end.
JOBS_PER_CORE = 4
#: Events below which one more task is not worth it: a Spark task costs about 50 ms besides its
#: work here (traces/checking/layout.py), the replay of about 5 000 events.
MIN_JOB_EVENTS = 20_000


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


@dataclass(frozen=True)
class ReplayJob:
    """What one Spark task replays: some segments, and the pieces holding their rows, in input order."""

    pieces: tuple[Piece, ...]
    segments: tuple[Segment, ...]

    @property
    def cost(self) -> float:
        """Work in checked-event units: following costs FOLLOW_COST of checking."""
        return sum(FOLLOW_COST * (s.first_seq - 1) + (s.end_seq - s.first_seq) for s in self.segments)


def plan_jobs(layout: Layout, plan: Sequence[Segment], cores: int) -> list[ReplayJob]:
    """The replay's Spark tasks, costliest first: each segment of a cut trace alone, reading that
    trace's pieces; the uncut traces in runs of about equal cost, in input order (so that a task
    reads a contiguous stretch of the input, and a row group at most twice): a few runs per core,
    none worth less than MIN_JOB_EVENTS."""
    position = {piece: i for i, piece in enumerate(layout.pieces)}
    whole = sorted((s for s in plan if s.index == 0 and s.last), key=lambda s: position[layout.trace_pieces[s.trace_id][0]])
    jobs = [ReplayJob(layout.trace_pieces[s.trace_id], (s,)) for s in plan if not (s.index == 0 and s.last)]
    total = sum(s.end_seq - s.first_seq for s in whole)
    count = min(len(whole), max(cores, min(JOBS_PER_CORE * cores, total // MIN_JOB_EVENTS)))
    run: list[Segment] = []
    done = runs = 0
    for s in whole:
        run.append(s)
        done += s.end_seq - s.first_seq
        if done * count >= total * (runs + 1) or s is whole[-1]:  # this run reached its share of the total
            pieces = sorted({p for r in run for p in layout.trace_pieces[r.trace_id]}, key=position.__getitem__)
            jobs.append(ReplayJob(tuple(pieces), tuple(run)))
            run, runs = [], runs + 1
    return sorted(jobs, key=lambda job: -job.cost)


def result_json(result: ReplayResult) -> str:
    return json.dumps(asdict(result))


def result_from_json(text: str) -> ReplayResult:
    data = json.loads(text)
    divergence = data.pop("divergence")
    data["actions"] = tuple((kind, n) for kind, n in data["actions"])
    data["findings"] = tuple(ClaimFinding(**f) for f in data["findings"])
    return ReplayResult(**data, divergence=None if divergence is None else Divergence(**divergence))


def run_job(job: ReplayJob, headers: Mapping[str, dict[str, Any]]) -> Iterator[tuple[str, int, ReplayResult]]:
    """Replay one job in this process: its pieces are read one at a time, in input order (each
    trace's rows come in seq order, which validation checked), and every row goes to its
    trace's segment. A segment's result is given, and its replay dropped, as soon as it is
    decided or its last event is fed, so the job holds only the segments under way (not the
    history of every trace it has replayed); reading stops once no segment is left."""
    segments = {s.trace_id: s for s in job.segments}
    open_segments = {s.trace_id: (s.end_seq, SegmentReplay(header_from_record(headers[s.trace_id]), s.first_seq)) for s in job.segments}
    for trace_id in [t for t, s in segments.items() if s.end_seq <= s.first_seq]:  # no events of its own
        yield trace_id, segments[trace_id].index, _segment_result(segments[trace_id], open_segments.pop(trace_id)[1])
    wanted = pa.array(sorted(open_segments), pa.string())
    for piece in job.pieces:
        if not open_segments:
            break
        table = read_unit(Unit((piece,)), EVENT_COLUMNS, dictionary=REPEATED_STRINGS)
        table = table.filter(pc.and_(pc.is_in(table.column("trace_id"), value_set=wanted), pc.not_equal(table.column("kind"), HEADER_KIND)))
        for trace_id in feed_segments(EventColumns(table), open_segments):
            yield trace_id, segments[trace_id].index, _segment_result(segments[trace_id], open_segments.pop(trace_id)[1])
    for trace_id, (_, replay) in open_segments.items():  # segments whose rows ended early (none, for a validated input)
        yield trace_id, segments[trace_id].index, _segment_result(segments[trace_id], replay)


def _segment_result(segment: Segment, replay: SegmentReplay) -> ReplayResult:
    if replay.checked == 0 and replay.result is None:
        # A segment with no events of its own has nothing to conclude from.
        return ReplayResult(segment.trace_id, "inconclusive", 0, reason=f"no events to replay in segment {segment.index}")
    return replay.end()


def replay_on_spark(
    spark: SparkSession, layout: Layout, headers: Mapping[str, dict[str, Any]], plan: Sequence[Segment]
) -> dict[str, ReplayResult]:
    """Replay every trace of ``plan`` (their rows are where ``layout`` says) as ``plan`` cuts them; one merged result per trace."""
    jobs = plan_jobs(layout, plan, spark.sparkContext.defaultParallelism)

    def replay(jobs: Iterable[ReplayJob]) -> Iterator[tuple[str, int, str]]:
        for job in jobs:
            for trace_id, index, result in run_job(job, headers):
                yield trace_id, index, result_json(result)

    texts = spark.sparkContext.parallelize(jobs, max(1, len(jobs))).mapPartitions(replay).collect()
    return _merged(plan, ((trace_id, index, result_from_json(text)) for trace_id, index, text in texts))


def replay_here(layout: Layout, headers: Mapping[str, dict[str, Any]], plan: Sequence[Segment]) -> dict[str, ReplayResult]:
    """:func:`replay_on_spark` in this process, one job after another, as one core would: what
    the Spark replay's speed-up is measured against (``traces/checking/bench.py``)."""
    jobs = plan_jobs(layout, plan, 1)
    return _merged(plan, (found for job in jobs for found in run_job(job, headers)))


def _merged(plan: Sequence[Segment], found: Iterable[tuple[str, int, ReplayResult]]) -> dict[str, ReplayResult]:
    """One result per trace of ``plan`` from its segments' results (trace id, segment index, result)."""
    results: dict[str, dict[int, ReplayResult]] = {}
    for trace_id, index, result in found:
        results.setdefault(trace_id, {})[index] = result
    merged: dict[str, ReplayResult] = {}
    for trace_id, segments in itertools.groupby(sorted(plan, key=lambda s: (s.trace_id, s.index)), key=lambda s: s.trace_id):
        parts = results.get(trace_id, {})
        missing = [s.index for s in segments if s.index not in parts]
        if missing:
            # A segment whose task sent no result (the trace has no rows in the input, say); a verdict without it would skip its events.
            merged[trace_id] = ReplayResult(trace_id, "inconclusive", 0, reason=f"no events to replay in segment(s) {missing}")
        else:
            merged[trace_id] = merge_segments([parts[i] for i in sorted(parts)])
    return merged


def _measure_follow_cost(paths: Sequence[str]) -> None:
    """Print the CPU time per event of following and of checking the events of the traces in
    ``paths`` as a replay task does (:func:`run_job`: reading, decoding and the replay; each trace
    a job of one segment, which checks every event, or follows all but its last), and their
    ratio: FOLLOW_COST."""
    import time

    from traces.checking.layout import plan as plan_layout
    from traces.format.read import validate

    validator = validate(paths)
    layout = plan_layout(paths)
    headers = validator.header_records()
    events = sum(validator.events_per_trace().values())
    cpu = {}
    for label in ("follow", "check"):
        start = time.process_time()
        for trace_id, p in validator.traces.items():
            first = p.last_seq if label == "follow" else 1
            job = ReplayJob(layout.trace_pieces[trace_id], (Segment(trace_id, 0, first, p.last_seq + 1, last=True),))
            for _ in run_job(job, headers):
                pass
        cpu[label] = time.process_time() - start
    print(
        f"{len(validator.traces)} trace(s), {events} events: follow {cpu['follow'] / events * 1e6:.2f} µs, "
        f"check {cpu['check'] / events * 1e6:.2f} µs an event; ratio {cpu['follow'] / cpu['check']:.2f}"
    )


if __name__ == "__main__":
    import sys

    _measure_follow_cost(sys.argv[1:])
