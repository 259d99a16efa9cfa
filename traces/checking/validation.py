"""Validation on Spark's executors: each task validates whole traces, the driver joins what they found.

The driver reads only the input's layout (:mod:`traces.checking.layout`): for Parquet, the file
footers and the ``trace_id`` column of each row group (dictionary-encoded: a few bytes per row
group and trace); for JSON Lines, the ``trace_id`` of each line, with Arrow's JSON reader in C++.
JSON Lines has no footer and cannot be read from its middle, and a trace may continue in another
file, whose records must be validated after its own in the same place: so the driver learns
which files share traces, and nothing else (big inputs are Parquet: JSON Lines is ~20× larger).

Every record is then checked in the tasks, by the same :class:`traces.format.read.Validator` that
``validate`` runs in the driver (one code path for the checks). A task takes the same work as a
rules task (:meth:`traces.checking.layout.Layout.tasks`): *units* of the layout, the pieces that
hold some whole traces, a large unit cut into runs of whole traces (which leave out the rows of
their neighbours' traces in a piece they share), and validates their files' parts (a JSON Lines
file, or a Parquet file's row groups) in input order, each trace from its header to its last
event: so the checks across records (``seq`` 1, 2, 3, … across batches, row groups and files;
``ts`` never going back below ``full``; one header per trace, before its events) are as complete
as in the driver. A task sends back, per file part, the records it took and its first problem
(file, line or row, field); per trace, its header and last ``seq`` (:class:`TraceSummary`); and
the events per kind. The driver joins them: the first problem of each file, in input order (the
one at the first line or row among all tasks: whether a record is valid depends only on itself and
the records of its own trace before it, so that is the problem ``validate`` meets first); a file
with no record is empty; a file the layout could not read is refused even if no task found a
problem in it. Any problem is invalid input (exit 2), and a file a task could not open or read
names the task's node: nothing is skipped into a pass.

One difference from ``validate``: after a file's first problem, ``validate`` reads none of the
file's later records, so a trace with records there that continues in a later file draws
follow-on problems there (a ``seq`` that skips, an event before its header); a task that
validates other traces of the bad file, in a run of its own, takes their records and reports no
such follow-on problems for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from pyspark.sql import SparkSession

from traces.checking.exits import UnreadableInput
from traces.checking.layout import Layout, Unit
from traces.format.read import EMPTY, InputProblem, TraceInputError, TraceSummary, Validator, check_part

#: A part of one file that a task validates: its location; its row groups (None: the whole file);
#: the traces whose records it validates (None: every trace in it).
Part = tuple[str, tuple[int, ...] | None, frozenset[str] | None]
#: A task's work: per layout unit (which holds every row of its traces), the unit's parts.
Work = Sequence[Sequence[Part]]


@dataclass(frozen=True)
class Finding:
    """The first problem a task found in one file: where (for ordering), the message and the problem as data."""

    position: int  # line or row; -1 when the file could not be opened or read
    message: str
    located: dict[str, Any]


@dataclass(frozen=True)
class TaskReport:
    """What one validation task sends to the driver: small, whatever the size of its traces."""

    records: dict[str, int]  # file -> records taken (headers included)
    findings: dict[str, Finding]  # file -> its first problem in this task's parts
    traces: dict[str, TraceSummary]
    kinds: dict[str, int]  # events per kind


def parts(unit: Unit) -> list[Part]:
    """The file parts of ``unit``, in their input order: a file's consecutive pieces form one part."""
    out: list[Part] = []
    for source, group in groupby(unit.pieces, key=lambda p: p.path):
        row_groups = tuple(p.row_group for p in group if p.row_group is not None)
        out.append((source, row_groups or None, unit.traces))
    return out


def validate_parts(tasks: Iterable[Work]) -> Iterator[TaskReport]:
    """The function each validation task runs (one task per partition): validate its parts in
    order with one :class:`~traces.format.read.Validator`; keep each file's first problem. After
    each unit its traces are whole, and the validator forgets their opaques (memory stays that of
    one unit's requests)."""
    for task in tasks:
        validator = Validator()
        records: Counter[str] = Counter()
        findings: dict[str, Finding] = {}
        for unit in task:
            for source, row_groups, traces in unit:
                before = validator.records
                try:
                    check_part(source, validator, row_groups, traces)
                except InputProblem as e:
                    found = _finding(source, e)
                    if source not in findings or found.position < findings[source].position:
                        findings[source] = found
                records[source] += validator.records - before
            validator.close_traces()
        yield TaskReport(dict(records), findings, validator.summaries(), dict(validator.kinds))


def _finding(source: str, problem: InputProblem) -> Finding:
    if problem.unreadable is not None:
        located = UnreadableInput(source, problem.unreadable).problem  # names this task's node
        return Finding(-1, f"{source}: {located['message']}", located)
    where = problem.where
    position = where.line if where.line is not None else where.row
    return Finding(position if position is not None else -1, str(problem), problem.as_data())


def unplaced(layout: Layout) -> list[Part]:
    """Every part of the input to validate: the layout's units, and whole each file that has no
    piece (a Parquet file with no row group, a file the layout could not read)."""
    placed = {p.path for p in layout.pieces}
    return [(f, None, None) for f in layout.files if f not in placed]


def validate_on_spark(spark: SparkSession, layout: Layout) -> Validator:
    """Validate every record of the input in Spark tasks; the driver's validator then holds each
    trace's header and events, as ``validate`` would. Raises TraceInputError listing the first
    problem of each bad file, in input order."""
    tasks: list[Work] = [[parts(unit) for unit in units] for units in layout.tasks(spark.sparkContext.defaultParallelism)] if layout.units else []
    tasks += [[[part]] for part in unplaced(layout)]
    reports = spark.sparkContext.parallelize(tasks, max(1, len(tasks))).mapPartitions(validate_parts).collect() if tasks else []
    return joined(layout, reports)


def joined(layout: Layout, reports: Sequence[TaskReport]) -> Validator:
    """The tasks' reports as one validator (raises TraceInputError: every problem, in input order)."""
    records: Counter[str] = Counter()
    first: dict[str, Finding] = {}
    for report in reports:
        records.update(report.records)
        for source, finding in report.findings.items():
            if source not in first or finding.position < first[source].position:
                first[source] = finding
    problems: list[str] = []
    located: list[dict[str, Any]] = []
    for source in layout.files:
        if source in first:
            problems.append(first[source].message)
            located.append(first[source].located)
        elif records[source] == 0:
            problems.append(f"{source}: {EMPTY}")
            located.append({"file": source, "message": EMPTY})
        elif source in layout.unread:
            # Valid by every check, yet its trace ids could not be read: never judged unread.
            message = f"its trace ids cannot be read: {layout.unread[source]}"
            problems.append(f"{source}: {message}")
            located.append({"file": source, "message": message})
    if problems:
        raise TraceInputError(problems, located)
    validator = Validator()
    for report in reports:
        validator.join(report.traces, report.kinds)
    return validator

