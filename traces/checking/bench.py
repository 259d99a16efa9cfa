"""``make bench``: throughput of the Spark checks on 1M- and 10M-event Parquet traces.

Measured, each in this one process with the same Spark session (local[2] by default):
1. validation of the 1M and 10M datasets side by side: in the driver (streaming, as
   ``flowspec project`` and ``validate`` do) and in Spark tasks (as ``flowspec check`` does,
   :mod:`traces.checking.validation`), with the driver's peak resident memory during each;
2. all rules together (frame rules + per-trace scans, no replay) on 1M and 10M events;
3. the full replay through the spec on Spark (rules off) on the 1M dataset, and the partial replay
   of the same dataset projected to ``queues`` and to ``black-box``;
4. the same replay in one plain Python process, job after job, for the ratio (with the compiled
   spec, as the workers run it, and with the interpreted spec);
5. peak resident memory of the driver and of the whole process tree (JVM and Python workers).

The traces: ``BASE_TRACES`` different recorded runs of the reference broker (several workloads
and seeds), replicated with new trace ids to reach each size, written as zstd Parquet with
100 000-row row groups and 1 000 000-row files. Results go to ``docs/benchmarks.md``'s
generated section and to stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traces.checking.compiled import compiled_path
from traces.checking.partial import Budgets
from traces.format.project import project
from traces.format.read import read_records
from traces.format.records import Observation
from traces.format.write import TraceWriter
from traces.checking.layout import plan as plan_layout
from traces.format.read import Validator, validate
from traces.recording.record import record_workload
from traces.checking.segments import plan_segments, replay_here, replay_on_spark
from traces.checking.validation import validate_on_spark

DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
BASE_WORKLOADS = ("steady", "bursts", "slow-disk", "pool-exhaustion", "full-send-queue", "retry-storm-limited", "many-topics", "faults")
T = TypeVar("T")


def _status_kb(field: str) -> int:
    """A field of this process's /proc status, in kB (VmRSS: resident now; VmHWM: resident at most)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(f"{field}:"))


@dataclass(frozen=True)
class DriverCost:
    """What one step cost this process, the driver (Spark's JVM and workers are other processes)."""

    rss_before_mb: float  # resident memory when the step began
    rss_peak_mb: float  # resident memory at most during the step (the kernel's high-water mark, reset first)
    cpu_seconds: float  # user and system time of all its threads (pyarrow decodes on several)


def driver_cost(run: Callable[[], T]) -> tuple[T, DriverCost]:
    """Run ``run``, and what it cost this process."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the resident memory now
    start, usage = _status_kb("VmRSS"), resource.getrusage(resource.RUSAGE_SELF)
    result = run()
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    return result, DriverCost(start / 1024, _status_kb("VmHWM") / 1024, cpu)


class PeakMemory:
    """Samples the resident memory of this process and all its descendants (the JVM, the Python workers)."""

    def __init__(self) -> None:
        self.peak_tree_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree_rss_kb(self) -> int:
        parents: dict[int, int] = {}
        rss: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                parents[int(entry)] = int(fields[1])
                rss[int(entry)] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
            except (OSError, IndexError, ValueError):
                continue
        tree, frontier = {os.getpid()}, [os.getpid()]
        while frontier:
            p = frontier.pop()
            for child, parent in parents.items():
                if parent == p and child not in tree:
                    tree.add(child)
                    frontier.append(child)
        return sum(rss.get(p, 0) for p in tree)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_tree_kb = max(self.peak_tree_kb, self._tree_rss_kb())
            self._stop.wait(0.5)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class Measure:
    """One measured step."""

    what: str
    events: int
    seconds: float

    @property
    def rate(self) -> float:
        """Events per second."""
        return self.events / self.seconds


def timed(what: str, events: int, run: Callable[[], T]) -> tuple[Measure, T]:
    """Run and time ``run``."""
    start = time.perf_counter()
    result = run()
    m = Measure(what, events, time.perf_counter() - start)
    print(f"{what}: {events} events in {m.seconds:.1f} s" + (f" = {m.rate:,.0f} events/s" if events else ""), flush=True)
    return m, result


def base_table(work: Path, events_per_trace: int, version: str) -> pa.Table:
    """Record the base traces (reference broker) and load them as one Arrow table."""
    parts = []
    for i, workload in enumerate(BASE_WORKLOADS):
        out = work / "base" / workload
        record_workload(out, workload, version, events_per_trace, seed=i)
        parts.append(pq.read_table(out))
    return pa.concat_tables(parts)


def replicate(base: pa.Table, target: int, out: Path) -> int:
    """Copies of ``base`` with fresh trace ids until ``target`` rows; written as a Parquet dataset."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.parquet"):
        old.unlink()
    rows, copy, file_index = 0, 0, 0
    writer: pq.ParquetWriter | None = None
    in_file = 0
    while rows < target:
        ids = pc.binary_join_element_wise(base.column("trace_id"), pa.scalar(f"x{copy}"), "-")
        table = base.set_column(base.schema.get_field_index("trace_id"), "trace_id", ids).cast(base.schema)
        if writer is None or in_file >= 1_000_000:
            if writer is not None:
                writer.close()
            writer = pq.ParquetWriter(out / f"part-{file_index:05d}.parquet", base.schema, compression="zstd")
            file_index, in_file = file_index + 1, 0
        writer.write_table(table, row_group_size=100_000)
        rows, in_file, copy = rows + table.num_rows, in_file + table.num_rows, copy + 1
    if writer is not None:
        writer.close()
    return rows


def replay_in_this_process(path: str) -> None:
    """Replay every trace of ``path`` here, as the Spark replay does but one job after another
    (:func:`traces.checking.segments.replay_here`), and print the seconds it took (run by
    :func:`plain_replay`). Like the Spark figure, it starts from a finished validation."""
    validator = validate([path])
    events = validator.events_per_trace()
    start = time.perf_counter()
    results = replay_here(plan_layout([path]), validator.header_records(), plan_segments(events, events, 1))
    print(f"{time.perf_counter() - start} {len(results)}")


def plain_replay(what: str, events: int, path: str, compiled: bool) -> Measure:
    """The replay of ``path`` in one separate plain Python process, with the spec compiled (as
    Spark's workers run it, traces/checking/compiled.py) or interpreted."""
    env = dict(os.environ)
    if compiled:
        build, why = compiled_path()
        if build is None:
            raise SystemExit(f"bench: {why}")
        env.update(PYTHONPATH=str(build), PYTHONSAFEPATH="1")
    child = subprocess.run(
        [sys.executable, "-c", "import sys; from traces.checking.bench import replay_in_this_process as r; r(sys.argv[1])", path],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    m = Measure(what, events, float(child.stdout.split()[0]))
    print(f"{what}: {events} events in {m.seconds:.1f} s = {m.rate:,.0f} events/s", flush=True)
    return m


def _replay_long_trace(spark: Any, work: Path, events: int, master: str) -> tuple[list[Measure], list[str]]:
    """One long trace replayed on Spark whole (one segment) and cut into segments: the segmented speed-up."""

    out = work / "long"
    m, _ = timed("record one long trace (reference broker, bursts)", 0, lambda: record_workload(out, "bursts", "5.3.3", events, seed=7))
    v = validate([str(out)])
    counts = v.events_per_trace()
    headers = v.header_records()
    layout = plan_layout([str(out)])
    parallelism = spark.sparkContext.defaultParallelism
    measures, verdicts = [], set()
    for cut in (1, parallelism):
        plan = plan_segments(counts, counts, parallelism=cut)
        mr, results = timed(
            f"full replay of one {v.events:,}-event trace, Spark {master}, {len(plan)} segment(s)",
            v.events,
            lambda: replay_on_spark(spark, layout, headers, plan),
        )
        measures.append(mr)
        verdicts |= {r.verdict for r in results.values()}
    lines = [
        f"- long trace: {v.events:,} events of workload bursts, recorded in {m.seconds:.0f} s; replay verdicts {sorted(verdicts)}",
        f"- one long trace, {parallelism} segments / 1 segment: {measures[1].rate / measures[0].rate:.2f}×",
    ]
    return measures, lines


def _partial_replay(spark: Any, source: str, out: Path, level: Observation, budgets: Budgets, master: str) -> tuple[Measure, str]:
    """The partial replay of the replay dataset projected to ``level``: its rate, verdicts and candidate sets."""
    from traces.checking.check import run_check

    if not out.exists():
        with TraceWriter(out, row_group=100_000, file_rows=1_000_000) as writer:
            writer.write_all(project((r.data for r in read_records([source])), level))
    validator = validate([str(out)])
    m, check = timed(
        f"partial replay at {level.value}, Spark {master}, {validator.events:,}",
        validator.events,
        lambda: run_check(spark, [str(out)], rules=False, replay=True, validator=validator, budgets=budgets),
    )
    # An inconclusive trace's events were not all explained: the rate counts the decided traces' only.
    decided = sum(t.events for t in check.traces if t.verdict != "inconclusive")
    m = dataclasses.replace(m, what=f"{m.what}, of which decided {decided:,}", events=decided)
    notes = [f["note"] for t in check.traces for f in t.findings if f["rule"] == "replay"]
    sizes = [re.search(r"candidates median ([\d.]+), max (\d+)", n) for n in notes]
    medians = sorted(float(s.group(1)) for s in sizes if s)
    maxima = [int(s.group(2)) for s in sizes if s]
    verdicts = {v: sum(1 for t in check.traces if t.verdict == v) for v in ("conformant", "violation", "inconclusive")}
    # The dataset's traces are copies of the base traces (:func:`replicate`), so a base trace whose
    # search needs about the budget's seconds is decided in some copies and not in others, as the load goes.
    copies: dict[str, list[int]] = {}  # base trace -> [copies decided, copies]
    for t in check.traces:
        tally = copies.setdefault(re.sub(r"-x\d+$", "", t.trace_id), [0, 0])
        tally[0] += t.verdict != "inconclusive"
        tally[1] += 1
    line = (
        f"- partial replay at {level.value} (budgets {budgets.candidates:,} candidates, {budgets.steps:,} steps, {budgets.seconds:g} s a trace, "
        f"the witness-first search's share {budgets.share(level):g}): "
        f"{verdicts}; candidates after an event, per trace: median of medians {medians[len(medians) // 2] if medians else 0:g}, "
        f"largest {max(maxima, default=0):,}; copies decided of each base trace: {', '.join(f'{base} {d}/{n}' for base, (d, n) in sorted(copies.items()))}"
    )
    print(line, flush=True)
    return m, line


def main() -> int:
    """Run the benchmark; write its section of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(prog="python -m traces.checking.bench")
    parser.add_argument("--sizes", default="1000000,10000000", help="comma-separated event counts")
    parser.add_argument("--replay-size", type=int, default=1_000_000, help="dataset size for the replays")
    parser.add_argument("--base-events", type=int, default=20_000, help="steps with arrivals per base trace")
    parser.add_argument("--long-events", type=int, default=300_000, help="steps with arrivals of the single long trace (0: skip)")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain-Python replay (for very large runs)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", type=Path, default=Path("out/bench"))
    parser.add_argument("--section", default="bench", help="which generated section of docs/benchmarks.md to rewrite")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/benchmarks.md")
    parser.add_argument(
        "--partial-only",
        default="",
        help="only the full replay and the partial replay at these levels (comma-separated: queues,black-box) of the replay dataset; implies --no-doc",
    )
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")} | {args.replay_size})
    levels = [Observation.QUEUES, Observation.BLACK_BOX]
    if args.partial_only:
        try:
            levels = [Observation(level) for level in args.partial_only.split(",")]
        except ValueError as e:
            parser.error(f"--partial-only: {e}")
        sizes, args.no_plain, args.long_events, args.no_doc = [args.replay_size], True, 0, True

    from traces.checking.check import run_check
    from traces.checking.session import get_spark

    lines: list[str] = []
    started = time.perf_counter()
    with PeakMemory() as memory:
        m, base = timed("record base traces (reference broker)", 0, lambda: base_table(args.work, args.base_events, "5.3.3"))
        lines.append(f"- base: {len(BASE_WORKLOADS)} recorded traces, {base.num_rows:,} events, recorded in {m.seconds:.0f} s")
        datasets = {n: args.work / f"events-{n}" for n in sizes}
        for n, path in datasets.items():
            mw, rows = timed(f"write dataset {n:,}", 0, lambda: replicate(base, n, path))
            files = sorted(path.glob("*.parquet"))
            size_mb = sum(f.stat().st_size for f in files) / 1e6
            lines.append(f"- dataset {n:,}: {rows:,} rows in {len(files)} files, {size_mb:,.0f} MB zstd Parquet, written in {mw.seconds:.0f} s")
        spark = get_spark(master=args.master, conf={"spark.driver.memory": "4g"})
        lines.append(f"- Spark's workers replay with the {'compiled' if compiled_path()[0] else 'interpreted'} spec")
        # JVM and workers warm up: all the base traces, so that there is a task for every core and
        # each core's Python worker is started before the timed runs.
        warm = str(args.work / "base")
        run_check(spark, [warm], rules=True, replay=True)  # validation in tasks too
        results = []
        validators = {}
        in_tasks: dict[int, tuple[Measure, Measure, Validator, DriverCost]] = {}
        # The tasks at every size first: the driver's own validation leaves memory resident that
        # the tasks' figures would show.
        for n in [] if args.partial_only else sizes:

            def validate_in_tasks() -> tuple[Measure, Measure, Validator]:
                start = time.perf_counter()
                layout = plan_layout([str(datasets[n])])
                ml = Measure(f"layout of {n:,} (driver)", sum(p.rows for p in layout.pieces), time.perf_counter() - start)
                start = time.perf_counter()
                tasks = validate_on_spark(spark, layout)
                return ml, Measure(f"validate {n:,} in Spark tasks, {args.master}", tasks.events, time.perf_counter() - start), tasks

            (ml, mt, tasks), with_tasks = driver_cost(validate_in_tasks)
            in_tasks[n] = (ml, mt, tasks, with_tasks)
        for n in sizes:
            path = str(datasets[n])
            # The validator counts the events (rows minus headers); every rate below uses that count.
            start = time.perf_counter()
            v, in_driver = driver_cost(lambda: validate([path]))
            validators[n] = v
            if n not in in_tasks:
                continue
            mv = Measure(f"validate {n:,} in the driver", v.events, time.perf_counter() - start)
            ml, mt, tasks, with_tasks = in_tasks[n]
            if (tasks.summaries(), tasks.kinds) != (v.summaries(), v.kinds):
                raise SystemExit(f"bench: validation in Spark tasks and in the driver disagree on the {n:,} dataset")
            for m in (ml, mt, mv):
                print(f"{m.what}: {m.events} events in {m.seconds:.1f} s = {m.rate:,.0f} events/s", flush=True)
            results += [mv, ml, mt]
            lines.append(f"- dataset {n:,}: {len(v.traces)} traces, {v.events:,} events")
            lines.append(
                f"- validation of {n:,}: in Spark tasks {mt.rate / mv.rate:.2f}× the driver's speed, after the layout "
                f"({ml.seconds:.1f} s, which the rules and the replay need anyway). The driver, validating itself: "
                f"{in_driver.cpu_seconds:.1f} CPU s, peak RSS {in_driver.rss_peak_mb:,.0f} MB ({in_driver.rss_before_mb:,.0f} MB before); "
                f"with the layout and the tasks: {with_tasks.cpu_seconds:.1f} CPU s, peak RSS {with_tasks.rss_peak_mb:,.0f} MB "
                f"({with_tasks.rss_before_mb:,.0f} MB before)"
            )
        replay_path = str(datasets[args.replay_size])
        replay_events = validators[args.replay_size].events
        for n in [] if args.partial_only else sizes:
            v = validators[n]
            mr, _ = timed(
                f"all rules, Spark {args.master}, {n:,}", v.events, lambda: run_check(spark, [str(datasets[n])], rules=True, replay=False, validator=v)
            )
            results.append(mr)
        ms, check = timed(
            f"full replay, Spark {args.master}, {args.replay_size:,}",
            replay_events,
            lambda: run_check(spark, [replay_path], rules=False, replay=True, validator=validators[args.replay_size]),
        )
        results.append(ms)
        lines.append(f"- replay verdicts on Spark: {sorted({t.verdict for t in check.traces})}")
        for level in levels:
            budgets = Budgets() if level is Observation.QUEUES else Budgets(seconds=5)
            measure, line = _partial_replay(spark, replay_path, args.work / f"events-{args.replay_size}-{level.value}", level, budgets, args.master)
            results.append(measure)
            lines.append(line)
        if not args.no_plain:
            plain = {}
            for compiled in (True, False):
                engine = "compiled" if compiled else "interpreted"
                plain[engine] = plain_replay(f"full replay, one plain Python process, {engine} spec, {args.replay_size:,}", replay_events, replay_path, compiled)
                results.append(plain[engine])
            lines.append(f"- Spark replay / plain Python replay (both with the compiled spec): {ms.rate / plain['compiled'].rate:.2f}×")
            lines.append(f"- plain Python replay, compiled / interpreted spec: {plain['compiled'].rate / plain['interpreted'].rate:.2f}×")
        if args.long_events:
            long_measures, long_lines = _replay_long_trace(spark, args.work, args.long_events, args.master)
            results += long_measures
            lines += long_lines
    driver_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines.append(f"- peak RSS: driver {driver_mb:,.0f} MB; whole process tree (driver + JVM + Python workers) {memory.peak_tree_kb / 1024:,.0f} MB")
    lines.append(
        f"- machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}, "
        f"load average at end {os.getloadavg()[0]:.1f}; whole run {time.perf_counter() - started:,.0f} s"
    )
    lines.append("")
    lines.append("| step | events | seconds | events/s |")
    lines.append("|---|---:|---:|---:|")
    lines += [f"| {r.what} | {r.events:,} | {r.seconds:.1f} | {r.rate:,.0f} |" for r in results]
    text = "\n".join(lines)
    print(text)
    if not args.no_doc:
        begin, end = f"<!-- {args.section}:begin -->", f"<!-- {args.section}:end -->"
        doc = DOC.read_text()
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        DOC.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
