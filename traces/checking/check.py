"""``flowspec check``: validate traces, then run the rules and the replay on Spark, and judge each trace.

Pipeline (PObserve's shape): the driver finds where each trace's rows are
(:mod:`traces.checking.layout`: Parquet row groups and JSON Lines files that share traces form units of
whole traces) → validation, in Spark tasks over those units (:mod:`traces.checking.validation`: a bad
record stops everything with exit 2; it also counts the events per kind, the coverage) → the rules and the
report's time series, in one Spark job with no shuffle: the driver hands each task a few units;
the task reads them with pyarrow and judges
each trace with array operations over its columns (:mod:`traces.checking.scan`) → the replay of every
``full`` trace through the spec, again with tasks that read their traces' rows themselves,
long traces cut into segments on different cores (:mod:`traces.checking.segments`) → per-trace
verdicts. Spark never reads or shuffles a row: it runs the tasks. The driver only ever collects
per-rule summaries, replay results, samples of violating events (each with its raw record, from
the task that found it) and downsampled series; never a trace.

The tasks open the input's locations themselves (:mod:`traces.format.storage`), so every executor
must be able to read them: local files with ``--master local[N]`` (as ``flowspec check`` runs), a
file system mounted at the same path on every node, or object storage by URI (``s3://…``).

Verdicts: **violation** if a rule or the replay found one; **conformant** if no rule broke and
the replay conformed (a ``full`` trace replayed event by event, a lower one explained by a run
the partial replay found); otherwise **inconclusive**, naming what was missing (a budget of the
partial replay, say).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from spec.invariants import known_defects
from traces.format.answers import answer_tag
from traces.format.records import EVENT_COLUMNS, HEADER_KIND, REPEATED_STRINGS, Observation, TraceHeader, header_from_record, record_text, vocabulary
from traces.checking.context import events_around
from traces.checking.layout import Layout, Unit, read_unit
from traces.checking.layout import plan as plan_layout
from traces.format.read import TraceInputError, Validator
from traces.format.write import TraceWriter
from traces.checking.partial import Budgets, partial_on_spark
from traces.checking.progress import Progress
from traces.checking.replay import ReplayResult
from traces.checking.segments import plan_segments, replay_on_spark
from traces.checking.rules import LEVEL_ORDER, RULES, RULES_BY_NAME
from traces.checking.scan import Events, TraceScan
from traces.checking.exits import EXIT_CONFORMANT, EXIT_INCONCLUSIVE, EXIT_VIOLATION, CheckerFailure
from traces.checking.validation import validate_on_spark

REPLAY = "replay"
#: A rule's status when the trace breaks a claim its release's own code breaks: a finding, not a violation.
KNOWN_DEFECT = "known defect"
#: How the replay's sample of a claim the release itself breaks begins.
KNOWN_DEFECT_DETAIL = "known defect of the release"
UNSCANNED_KINDS = ("ClockAdvances", "FastFailureStopsAtHead", "FastFailureEndsBusyDrain", "WorkerPassesPutCheck")
SERIES_BINS = 120


# -- Per-trace work: scan rules, replay, series -------------------------------------------------------


def _series(header: TraceHeader, scan: TraceScan) -> dict[str, Any]:
    """Downsampled pictures of one trace: queue depth per queue, lock hold vs busy threshold,
    free buffers, answers by kind (:func:`traces.format.answers.answer_tag`), each per time bin
    (max within the bin; free buffers at the bin's last event); and each topic's answers."""
    if scan.n == 0:
        return {}
    t0, t1 = int(scan.ts[0]), int(scan.ts[-1])
    width = max(1, (t1 - t0 + SERIES_BINS) // SERIES_BINS)
    bins = np.minimum(SERIES_BINS - 1, (scan.ts - t0) // width)

    def peak(values: np.ndarray[Any, Any]) -> list[int]:
        out = np.zeros(SERIES_BINS, np.int64)
        np.maximum.at(out, bins, values)
        return [int(v) for v in out]

    pool = header.config.transient_store_pool_size if header.config.pool_enabled else 0
    free = np.full(SERIES_BINS, pool, np.int64)  # a bin with no event shows the whole pool, as before
    last = np.flatnonzero(np.concatenate((bins[1:] != bins[:-1], [True])))  # each bin's last event
    free[bins[last]] = scan.free[last]
    # Each distinct (code, remark) is named once; [TIMEOUT_CLEAN_QUEUE] remarks are mostly distinct.
    pairs, pair_of = np.unique(np.stack([scan.response_code, scan.response_remark_index]), axis=1, return_inverse=True)
    tags = [answer_tag(int(c), scan.remarks[int(r)]) for c, r in pairs.T]
    names = sorted(set(tags))
    tag_of = np.array([names.index(t) for t in tags], np.int64)[pair_of.reshape(-1)] if tags else np.zeros(0, np.int64)
    answered = bins[scan.response_event]
    answers = {name: [int(v) for v in np.bincount(answered[tag_of == k], minlength=SERIES_BINS)] for k, name in enumerate(names)}
    # Each topic's answers: a response answers the arrival that carries its opaque.
    arrivals = scan.events.has_request_id  # only an arrival names its opaque
    topic_of = dict(zip(scan.request_id[arrivals].tolist(), scan.events.topic[arrivals].tolist()))
    by_topic: dict[str, dict[str, int]] = {}
    for opaque, k in zip(scan.response_opaque[scan.response_has_opaque].tolist(), tag_of[scan.response_has_opaque].tolist()):
        t = topic_of.get(opaque, -1)
        topic = (scan.events.topics[t] or "(no topic)") if t >= 0 else "(no topic)"
        counts = by_topic.setdefault(topic, {})
        counts[names[k]] = counts.get(names[k], 0) + 1
    return {
        "t0": t0,
        "bin_ms": width,
        "queue_depth": {q: peak(d) for q, d in scan.depth.items()},
        "lock_hold_ms": peak(np.where(scan.begin != 0, scan.ts - scan.begin, 0)),
        "busy_threshold_ms": header.config.os_page_cache_busy_timeout_ms,
        "free_buffers": [int(v) for v in free],
        "pool_enabled": header.config.pool_enabled,
        "answers": answers,
        "answers_by_topic": by_topic,
    }


def per_task(headers: Mapping[str, dict[str, Any]], rules: bool, series: bool) -> Callable[[Iterable[tuple[Unit, ...]]], Iterator[list[dict[str, Any]]]]:
    """The function each Spark task runs on its units (:mod:`traces.checking.layout`; one task per partition):
    read each unit's pieces with pyarrow and judge each trace with :func:`per_trace`'s function.
    Returns the finding rows.

    A unit holds whole traces, its pieces in input order, so each trace's rows arrive in seq order
    (validation saw them in that order); only traces that interleave need a sort.
    """
    judge = per_trace(headers, rules, series)

    def run(tasks: Iterable[tuple[Unit, ...]]) -> Iterator[list[dict[str, Any]]]:
        for units in tasks:
            rows: list[dict[str, Any]] = []
            for unit in units:
                # Every event column, not only the scans' (which are all but one of them, and cost
                # the same to read): a violating event's raw record is then at hand in the task.
                table = read_unit(unit, EVENT_COLUMNS, dictionary=REPEATED_STRINGS)
                index, names = vocabulary(table.column("kind"))
                drop = np.array([n == HEADER_KIND for n in names], bool)[index]
                if not series:
                    # The scans never read these kinds (a third of a typical trace is ClockAdvances)
                    # unless they carry a response: fewer rows to convert.
                    silent = np.asarray(pc.fill_null(pc.list_value_length(table.column("responses")), 0).to_numpy()) == 0
                    drop |= np.array([n in UNSCANNED_KINDS for n in names], bool)[index] & silent
                rows += _judge_unit(table.filter(pa.array(~drop)), judge)
            yield rows

    return run


def _judge_unit(table: pa.Table, judge: Callable[[str, Events], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every trace of one unit's events (no header rows), each judged on its own rows in seq order."""
    if table.num_rows == 0:  # every row was a header or one the scans never read
        return []
    trace, names = vocabulary(table.column("trace_id"))
    seq = np.asarray(table.column("seq").to_numpy(), dtype=np.int64)
    boundary = np.concatenate(([True], trace[1:] != trace[:-1]))
    if np.bincount(trace[boundary]).max() > 1 or np.any(~boundary[1:] & (seq[1:] <= seq[:-1])):
        # Traces interleave in this unit: group each trace's rows, in seq order.
        order = np.lexsort((seq, trace))
        table, trace = table.take(pa.array(order)), trace[order]
        boundary = np.concatenate(([True], trace[1:] != trace[:-1]))
    events = Events.of(table)
    starts = np.flatnonzero(boundary)
    out: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    rows: list[int] = []  # the row of each sample
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(trace)]):
        found = judge(names[trace[start]], events.slice(start, end))
        for finding in found:
            samples += finding["sample"]
            rows += [start + int(np.searchsorted(events.seq[start:end], s["seq"])) for s in finding["sample"]]
        out += found
    records = table.take(pa.array(rows, pa.int64())).to_pylist() if rows else []
    for sample, record in zip(samples, records):
        sample["raw"] = record_text(record) if record["seq"] == sample["seq"] else ""
    return out


def per_trace(headers: Mapping[str, dict[str, Any]], rules: bool, series: bool) -> Callable[[str, Events], list[dict[str, Any]]]:
    """The function run on one trace's events, in seq order (its header is passed in, as a record):
    the trace's finding rows."""

    def run(trace_id: str, events: Events) -> list[dict[str, Any]]:
        try:
            return judge(trace_id, events)
        except Exception as e:
            raise CheckerFailure(trace_id, e) from e

    def judge(trace_id: str, events: Events) -> list[dict[str, Any]]:
        header = header_from_record(headers[trace_id])
        out: list[dict[str, Any]] = []
        scan = TraceScan(header, events)
        if rules:
            level = LEVEL_ORDER[header.observation]
            known = known_defects(header.config.profile)
            for name, finding in scan.findings.items():
                rule = RULES_BY_NAME[name]
                if LEVEL_ORDER[rule.level] > level:
                    status, note = "inconclusive", f"needs observation {rule.level.value!r}; the trace is {header.observation.value!r}"
                elif finding.violations and rule.claim in known:
                    status = KNOWN_DEFECT
                    note = f"a known defect of release {header.profile}: its own code breaks spec.invariants.{rule.claim}"
                elif finding.violations:
                    status, note = "violation", ""
                elif finding.checked:
                    status, note = "pass", ""
                else:
                    status, note = "inconclusive", "nothing to check in this trace"
                out.append(
                    {
                        "trace_id": trace_id,
                        "rule": name,
                        "status": status,
                        "checked": finding.checked,
                        "violations": finding.violations,
                        "sample": [{"seq": s, "detail": d} for s, d in finding.sample],
                        "note": note,
                    }
                )
        if series:
            out.append(
                {"trace_id": trace_id, "rule": "__series__", "status": "", "checked": 0, "violations": 0, "sample": [], "note": json.dumps(_series(header, scan))}
            )
        return out

    return run


# -- The check ------------------------------------------------------------------------------------


@dataclass
class TraceVerdict:
    """One trace's verdict with its findings."""

    trace_id: str
    verdict: str
    observation: str
    events: int
    findings: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    series: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckResult:
    """Everything ``flowspec check`` reports."""

    traces: list[TraceVerdict]
    kinds: dict[str, int]  # events per kind over all traces (action coverage)
    rule_totals: dict[str, dict[str, int]]  # rule -> status -> traces

    @property
    def exit_code(self) -> int:
        """1 any violation; else 3 any inconclusive trace; else 0 (:mod:`traces.checking.exits`)."""
        if any(t.verdict == "violation" for t in self.traces):
            return EXIT_VIOLATION
        if any(t.verdict != "conformant" for t in self.traces):
            return EXIT_INCONCLUSIVE
        return EXIT_CONFORMANT


class WrongProfile(TraceInputError):
    """Valid traces, but not all of the profile the check was asked to require."""


def run_check(
    spark: SparkSession,
    paths: Sequence[str],
    rules: bool = True,
    replay: bool = True,
    series: bool = False,
    validator: Validator | None = None,
    budgets: Budgets = Budgets(),
    witness: Path | None = None,
    progress: bool = False,
    profile: str | None = None,
    context: bool = False,
) -> CheckResult:
    """Validate ``paths`` in Spark tasks (raises TraceInputError; a ``validator`` given has
    validated them already), then judge every trace on Spark; with ``profile``, refuse traces of
    another profile (WrongProfile); with ``witness``, write there, as a ``full`` trace, the run of
    the spec that explains each conformant partial trace; with ``context``, give each sample of a
    violation or known defect the events around it."""
    layout = plan_layout(paths)
    shown = Progress(spark, progress)
    if validator is None:
        with shown.phase("validation"):
            validator = validate_on_spark(spark, layout)
    elif layout.unread:  # validated in the driver, but its trace ids cannot be read now
        unread = {f: f"cannot be read: {why}" for f, why in layout.unread.items()}
        raise TraceInputError([f"{f}: {m}" for f, m in unread.items()], [{"file": f, "message": m} for f, m in unread.items()])
    if profile is not None:
        wrong = {t: p.header.profile for t, p in validator.traces.items() if p.header.profile != profile}
        if wrong:
            problems = [f"trace {t}: claims profile {p}, not {profile}" for t, p in wrong.items()]
            raise WrongProfile(problems, [{"trace_id": t, "message": m} for t, m in zip(wrong, problems)])
    headers = validator.header_records()
    # Rules and series: one Spark task per group of whole traces, no shuffle. The coverage (events
    # per kind) is validation's count, which read every record.
    tasks = layout.tasks(spark.sparkContext.defaultParallelism) if rules or series else []
    rows: list[dict[str, Any]] = []
    with shown.phase("rules"):
        for task_rows in spark.sparkContext.parallelize(tasks, len(tasks)).mapPartitions(per_task(headers, rules, series)).collect() if tasks else []:
            rows += task_rows
    if replay:
        with shown.phase("replay"):
            rows += [_replay_row(r) for r in _replay(spark, layout, validator, headers, budgets, witness)]
    if context:
        with shown.phase("context"):
            _add_context(spark, layout, rows)
    per_trace_events = validator.events_per_trace()
    verdicts = _verdicts(validator, rows, per_trace_events)
    totals: dict[str, dict[str, int]] = {}
    for t in verdicts:
        for f in t.findings:
            totals.setdefault(f["rule"], {}).setdefault(f["status"], 0)
            totals[f["rule"]][f["status"]] += 1
    return CheckResult(verdicts, dict(validator.kinds), totals)


def _replay(
    spark: SparkSession,
    layout: Layout,
    validator: Validator,
    headers: Mapping[str, dict[str, Any]],
    budgets: Budgets,
    witness: Path | None,
) -> list[ReplayResult]:
    """Every trace's replay result: ``full`` traces on Spark (long ones in segments), the others by
    the partial replay's search (:mod:`traces.checking.partial`), a task a run of traces."""
    full = {tid for tid, p in validator.traces.items() if p.header.observation is Observation.FULL}
    partial = sorted(tid for tid in validator.traces if tid not in full)
    results: list[ReplayResult] = []
    for trace_id, (result, records) in sorted(partial_on_spark(spark, layout, headers, partial, budgets, witness is not None).items()):
        results.append(result)
        if witness is not None and records:
            witness.mkdir(parents=True, exist_ok=True)
            with TraceWriter(witness / f"{_file_name(trace_id)}.jsonl") as writer:
                writer.write_all(records)
    events_per_trace = {tid: validator.traces[tid].last_seq for tid in full}
    plan = plan_segments(events_per_trace, full, spark.sparkContext.defaultParallelism)
    if plan:
        results += replay_on_spark(spark, layout, headers, plan).values()
    return results


def _replay_row(result: ReplayResult) -> dict[str, Any]:
    """A replay result as a finding row."""
    d = result.divergence
    known = [
        {"seq": f.seq, "detail": f"{KNOWN_DEFECT_DETAIL}: {f.claim} ({f.change})", "raw": ""}
        for f in result.findings
        if f.known
    ]
    return {
        "trace_id": result.trace_id,
        "rule": REPLAY,
        "status": {"conformant": "pass"}.get(result.verdict, result.verdict),
        "checked": result.events,
        "violations": 0 if d is None else 1,
        "sample": ([] if d is None else [{"seq": d.seq, "detail": d.explain(), "raw": d.record}]) + known,
        "note": result.reason or json.dumps(dict(result.actions)),
    }


def _add_context(spark: SparkSession, layout: Layout, rows: list[dict[str, Any]]) -> None:
    """Each sample of a violation or a known defect gets ``context``: the events around it, as
    [seq, raw record] pairs (:mod:`traces.checking.context`)."""
    samples = [(r["trace_id"], s) for r in rows if r["status"] in ("violation", KNOWN_DEFECT) or r["rule"] == REPLAY for s in r["sample"]]
    wanted: dict[str, list[int]] = {}
    for trace_id, sample in samples:
        wanted.setdefault(trace_id, []).append(sample["seq"])
    around = events_around(spark, layout, wanted)
    for trace_id, sample in samples:
        sample["context"] = [list(event) for event in around[trace_id][sample["seq"]]]


def _file_name(trace_id: str) -> str:
    """A trace id as a file name: path separators and other odd characters replaced."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in trace_id)


def _verdicts(validator: Validator, rows: list[dict[str, Any]], events: Mapping[str, int]) -> list[TraceVerdict]:
    by_trace: dict[str, list[dict[str, Any]]] = {}
    series: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["rule"] == "__series__":
            series[r["trace_id"]] = json.loads(r["note"])
        else:
            by_trace.setdefault(r["trace_id"], []).append(r)
    out = []
    for trace_id, progress in sorted(validator.traces.items()):
        findings = sorted(by_trace.get(trace_id, []), key=lambda f: (f["rule"] != REPLAY, f["rule"]))
        present = {f["rule"] for f in findings}
        for rule in RULES:
            if rule.name not in present and rule.body == "frame":
                findings.append(_empty(trace_id, rule.name, "nothing to check in this trace"))
        missing = [f"{f['rule']}: {f['note']}" for f in findings if f["status"] == "inconclusive" and f["rule"] == REPLAY]
        if any(f["status"] == "violation" for f in findings):
            verdict = "violation"
        elif any(f["rule"] == REPLAY and f["status"] == "pass" for f in findings):
            verdict = "conformant"
        else:
            verdict = "inconclusive"
            if not missing:
                missing = ["the replay was not run"]
        out.append(
            TraceVerdict(trace_id, verdict, progress.header.observation.value, events.get(trace_id, 0), findings, missing, series.get(trace_id, {}))
        )
    return out


def _empty(trace_id: str, rule: str, note: str) -> dict[str, Any]:
    return {"trace_id": trace_id, "rule": rule, "status": "inconclusive", "checked": 0, "violations": 0, "sample": [], "note": note}

