"""Reading and validating traces: JSON Lines or Parquet; files, directories, globs or URIs (:mod:`traces.format.storage`).

Validation streams: one record at a time (JSON Lines) or one batch at a time (Parquet, checked
with Arrow compute and numpy, and row by row only when a batch is not clean), with per-trace
bookkeeping only (last ``seq`` and ``ts``, the header, the opaques of its requests so far). The first problem of each file is reported with the file, the line (JSON Lines) or
row (Parquet) and the field; any problem makes the input invalid (exit code 2), so an
unreadable line can never be skipped into a pass.

:func:`validate` runs in one process (``flowspec project``, the tests); ``flowspec check`` runs the
same :class:`Validator` in Spark tasks, each on whole traces (:func:`check_part`,
:mod:`traces.checking.validation`), and joins what they leave of each trace (:class:`TraceSummary`).
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spec.profiles import ExecutorName
from spec.codes import ResponseCode
from traces.format.storage import first_line, open_input, suffix, trace_files
from traces.format.records import (
    ARROW_SCHEMA,
    BLACK_BOX_OPTIONAL,
    EVENT_FIELD_COLUMNS,
    FORMAT_VERSION,
    HEADER_COLUMNS,
    OBJECT_HEADER_COLUMNS,
    OPTIONAL_HEADER_COLUMNS,
    HEADER_KIND,
    JAVA_INT_MAX,
    JAVA_INT_MIN,
    KIND_FIELDS,
    KINDS,
    LEVEL_KINDS,
    REPEATED_STRINGS,
    RESPONSE_KIND,
    ConfigError,
    header_from_record,
    header_record,
    Observation,
    TraceHeader,
)

#: A longer JSON line is refused before it is parsed: no legitimate record comes near it.
MAX_LINE_BYTES = 1 << 20
PARQUET_BATCH = 65_536

_COLUMN_TYPES: dict[str, str] = {
    "trace_id": "str",
    "seq": "int",
    "ts": "int",
    "kind": "str",
    "io_thread": "int",
    "code": "int",
    "topic": "str",
    "oneway": "bool",
    "executor": "str",
    "worker": "int",
    "queue": "str",
    "ms": "int",
    "enabled": "bool",
    "wait_ms": "int",
    "request_id": "int",
    "format_version": "str",
    "implementation": "str",
    "implementation_version": "str",
    "profile": "str",
    "observation": "str",
    "recording_incomplete": "str",
}
assert set(_COLUMN_TYPES) | {"responses", *OBJECT_HEADER_COLUMNS} == set(ARROW_SCHEMA.names)


class TraceInputError(Exception):
    """The input cannot be read as traces; ``problems`` holds one message per bad file, and
    ``located`` the same as data: file, line (JSON Lines) or row (Parquet) where known, message."""

    def __init__(self, problems: Sequence[str], located: Sequence[Mapping[str, Any]] | None = None) -> None:
        super().__init__("\n".join(problems))
        self.problems = tuple(problems)
        self.located = tuple(located) if located is not None else tuple({"message": p} for p in problems)


class _Bad(Exception):
    """One problem in one record (internal: wrapped with the location by the reader)."""


@dataclass(frozen=True)
class Location:
    """Where a record came from: file and 1-based line (JSON Lines) or 0-based row (Parquet)."""

    file: str
    line: int | None = None
    row: int | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file}:{self.line}"
        return f"{self.file} row {self.row}"


def _each_refused(paths: Sequence[str], message: str) -> TraceInputError:
    """Invalid input: ``message`` about each of ``paths``."""
    return TraceInputError([f"{p}: {message}" for p in paths], [{"file": p, "message": message} for p in paths])


def resolve(paths: Sequence[str]) -> list[str]:
    """The trace files named by ``paths``, as locations every node can open
    (:mod:`traces.format.storage`): files, directories (searched recursively), local globs, and
    URIs of any file system pyarrow supports (``file://``, ``s3://``, ``hdfs://``, …)."""
    files: list[str] = []
    missing: list[str] = []  # the paths that name nothing
    unreachable: list[tuple[str, str]] = []  # the paths whose file system refused, and why
    for p in paths:
        try:
            found = trace_files(p)
        except (OSError, pa.ArrowException) as e:
            unreachable.append((p, f"cannot be opened: {first_line(e)}"))
            continue
        if found is None:
            missing.append(p)
        else:
            files += found
    if missing or unreachable:
        refused = _each_refused(missing, "no such file or directory")
        raise TraceInputError(
            [*refused.problems, *(f"{p}: {why}" for p, why in unreachable)],
            [*refused.located, *({"file": p, "message": why} for p, why in unreachable)],
        )
    if not files:
        raise TraceInputError([f"{', '.join(paths)}: no trace files (*.jsonl, *.parquet) found"])
    return files


def _is_parquet(source: str) -> bool:
    return suffix(source) == ".parquet"


def _jsonl_records(source: str) -> Iterator[tuple[Location, dict[str, Any]]]:
    try:
        stream = open_input(source)
    except (OSError, pa.ArrowException) as e:
        raise InputProblem(Location(source, line=1), f"cannot be opened: {first_line(e)}", unreadable=e) from None
    with io.BufferedReader(stream, buffer_size=1 << 20) as f:
        number = 0
        while True:
            try:
                raw = f.readline(MAX_LINE_BYTES + 1)
            except (OSError, pa.ArrowException) as e:
                raise InputProblem(Location(source, line=number + 1), f"cannot be read: {first_line(e)}", unreadable=e) from None
            if not raw:
                return
            number += 1
            where = Location(source, line=number)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise InputProblem(where, f"line is longer than {MAX_LINE_BYTES} bytes; not a trace record")
            if not raw.strip():
                raise InputProblem(where, "empty line")
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise InputProblem(where, f"malformed JSON: {e}") from None
            if not isinstance(record, dict):
                raise InputProblem(where, f"a record must be a JSON object, got {type(record).__name__}")
            yield where, record


def _parquet_batches(source: str, row_groups: Sequence[int] | None = None) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The batches of one Parquet file (ARROW_SCHEMA, the REPEATED_STRINGS dictionary-encoded), or
    of its ``row_groups`` only (in the order given), each with the file's number of its first row."""
    where = Location(source, row=0)
    try:
        file = open_input(source)
    except (OSError, pa.ArrowException) as e:
        raise InputProblem(where, f"cannot be opened: {first_line(e)}", unreadable=e) from None
    with file:
        try:
            pf = pq.ParquetFile(file)
        except (pa.ArrowException, OSError) as e:
            raise InputProblem(where, f"not a readable Parquet file: {e}", unreadable=e if isinstance(e, OSError) else None) from None
        schema = pf.schema_arrow
        # An optional header column (added to format 1 after files were written without it) may be
        # absent: its rows read as null, as a JSON Lines header without the field does.
        absent = [n for n in ARROW_SCHEMA.names if n not in schema.names and n in OPTIONAL_HEADER_COLUMNS]
        for expected in ARROW_SCHEMA:
            if expected.name in absent:
                continue
            if expected.name not in schema.names:
                raise InputProblem(where, f"field {expected.name!r}: column missing (expected {expected.type})")
            actual = schema.field(expected.name).type
            if actual != expected.type:
                raise InputProblem(where, f"field {expected.name!r}: column has type {actual}, expected {expected.type}")
        extra = [n for n in schema.names if n not in ARROW_SCHEMA.names]
        if extra:
            raise InputProblem(where, f"unknown column(s) {extra}")
        # Strings that repeat arrive dictionary-encoded: cheaper to decode, and accept_batch groups
        # by kind and by trace through the dictionary.
        counts = [pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups)]
        first_rows = np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).tolist()
        groups = list(range(len(counts))) if row_groups is None else list(row_groups)
        row = 0
        try:
            pf = pq.ParquetFile(file, metadata=pf.metadata, read_dictionary=list(REPEATED_STRINGS))
            # Consecutive row groups are read as one stream of batches, as the whole file is.
            for run in np.split(groups, np.flatnonzero(np.diff(groups) != 1) + 1) if groups else []:
                row = first_rows[run[0]]
                for batch in pf.iter_batches(batch_size=PARQUET_BATCH, row_groups=run.tolist(), columns=[n for n in ARROW_SCHEMA.names if n not in absent]):
                    yield row, _with_nulls(batch, absent)
                    row += batch.num_rows
        except (pa.ArrowException, OSError) as e:
            problem = InputProblem(Location(source, row=row), f"unreadable Parquet data: {e}", unreadable=e if isinstance(e, OSError) else None)
            raise problem from None


def _with_nulls(batch: pa.RecordBatch, absent: Sequence[str]) -> pa.RecordBatch:
    """``batch`` with a null column for each ``absent`` one, every column in ARROW_SCHEMA's order."""
    if not absent:
        return batch
    columns = [batch.column(n) if n not in absent else pa.nulls(batch.num_rows, ARROW_SCHEMA.field(n).type) for n in ARROW_SCHEMA.names]
    return pa.RecordBatch.from_arrays(columns, names=list(ARROW_SCHEMA.names))


def _rows(source: str, first: int, batch: pa.RecordBatch, rows: Sequence[int] | None = None) -> Iterator[tuple[Location, dict[str, Any]]]:
    """The batch's records with their locations: rows ``first``, ``first`` + 1, …, or the file's ``rows``."""
    for i, record in enumerate(batch.to_pylist()):
        yield Location(source, row=first + i if rows is None else rows[i]), record


def _parquet_records(source: str) -> Iterator[tuple[Location, dict[str, Any]]]:
    for first, batch in _parquet_batches(source):
        yield from _rows(source, first, batch)


class InputProblem(Exception):
    """One problem of the input, where it is: a file that cannot be opened, a line or row that is not a valid record."""

    def __init__(self, where: Location, message: str, unreadable: BaseException | None = None) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
        # The file system's error when the file could not be opened or read (on this node; another
        # may read it), rather than what was read not being a valid trace.
        self.unreadable = unreadable

    def as_data(self) -> dict[str, Any]:
        where = {"file": self.where.file, "line": self.where.line, "row": self.where.row}
        return {**{k: v for k, v in where.items() if v is not None}, "message": self.message}


def raw_records(source: str | Path) -> Iterator[tuple[Location, dict[str, Any]]]:
    """The records of one file (a location, :mod:`traces.format.storage`), unvalidated, with their locations."""
    source = str(source)
    return _parquet_records(source) if _is_parquet(source) else _jsonl_records(source)


def _check_type(record: Mapping[str, Any], name: str, kind: str, required: bool) -> None:
    value = record.get(name)
    if type(value) is _EXACT_TYPES[kind]:
        return  # the common case, decided without the checks below
    if value is None:
        if required:
            raise _Bad(f"field {name!r} is missing")
        return
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str if kind == "str" else bool)
    if not ok:
        raise _Bad(f"field {name!r} must be {kind}, got {json.dumps(value)[:80]}")


_EXACT_TYPES: dict[str, type] = {"int": int, "str": str, "bool": bool}
_RECORD_FIELDS = frozenset(_COLUMN_TYPES) | {"responses", *OBJECT_HEADER_COLUMNS}
#: Per event kind, the event columns it must leave null, in column order (the order of the messages).
_NOT_CARRIED: dict[str, tuple[str, ...]] = {k: tuple(n for n in EVENT_FIELD_COLUMNS if n not in f) for k, f in KIND_FIELDS.items()}
#: Per event kind, every field it must leave null (or out).
_NULL_FIELDS: dict[str, frozenset[str]] = {k: frozenset(n) | frozenset(HEADER_COLUMNS) for k, n in _NOT_CARRIED.items()}
_EXECUTOR_NAMES = {n.value for n in ExecutorName}
#: The answers written by steps a 'queues' trace does not observe (the put path's SUCCESS, and the
#: SYSTEM_ERROR of an exception inside the put lock): the only ones it records as Response events.
_PUT_PATH_CODES = frozenset({int(ResponseCode.SUCCESS), int(ResponseCode.SYSTEM_ERROR)})
_PUT_PATH_CODE_VALUES = pa.array(sorted(_PUT_PATH_CODES), pa.int64())


def _parse_header(record: Mapping[str, Any]) -> TraceHeader:
    """The header a header record describes; _Bad names the field if it is not a valid header."""
    seq = record["seq"]
    if seq != 0:
        raise _Bad(f"field 'seq': a header has seq 0, got {seq}")
    for name in HEADER_COLUMNS:
        if name not in OBJECT_HEADER_COLUMNS:
            _check_type(record, name, "str", required=name not in OPTIONAL_HEADER_COLUMNS)
    if record.get("recording_incomplete") is not None:
        raise _Bad(
            "field 'recording_incomplete': the recorder did not record the whole run, so the trace "
            f"cannot be judged: {record['recording_incomplete']}"
        )
    if record["format_version"] != FORMAT_VERSION:
        raise _Bad(f"field 'format_version': unknown format version {record['format_version']!r}; this reader knows {FORMAT_VERSION!r}")
    if record["observation"] not in {o.value for o in Observation}:
        raise _Bad(f"field 'observation': {record['observation']!r} is not one of {[o.value for o in Observation]}")
    objects = {}
    for name in OBJECT_HEADER_COLUMNS:
        value = record.get(name)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                raise _Bad(f"field {name!r}: malformed JSON: {e}") from None
        if not isinstance(value, dict) and (value is not None or name not in OPTIONAL_HEADER_COLUMNS):
            raise _Bad(f"field {name!r} must be an object")
        objects[name] = value
    try:
        header = header_from_record({**record, **objects})
    except ConfigError as e:
        raise _Bad(f"field {e}") from None
    return header


# -- The same checks, a Parquet batch at a time ----------------------------------------------------
#
# Validator.check walks one dict per row; building those dicts alone caps it near 100k rows/s.
# Validator.accept_batch decides with pyarrow.compute and numpy whether *every* row of a batch
# would pass Validator.check, in order, from the validator's current state; only then does it
# take the batch. Any doubt leaves the state untouched and the caller checks the batch row by
# row, so every message still comes from Validator.check. Parquet's schema (checked per file in
# _parquet_batches) fixes each column's type, so what remains per row is presence, values and order.

#: Event kinds by code (the row of each table below); the header's code comes last.
_EVENT_KINDS: tuple[str, ...] = (*KINDS, RESPONSE_KIND)
_HEADER_CODE = len(_EVENT_KINDS)
_KIND_CODES: dict[str, int] = {**{k: i for i, k in enumerate(_EVENT_KINDS)}, HEADER_KIND: _HEADER_CODE}
_OBSERVATIONS: tuple[Observation, ...] = tuple(Observation)


def _by_kind(test: Callable[[str], bool]) -> npt.NDArray[np.bool_]:
    """Per kind code, whether ``test`` holds for that event kind (never for the header)."""
    return np.array([test(k) for k in _EVENT_KINDS] + [False])


_IS_ARRIVAL = _by_kind(lambda k: k == "RequestArrives")
_IS_RESPONSE = _by_kind(lambda k: k == RESPONSE_KIND)
#: Per executor-naming column, per kind code: whether the kind carries it.
_CARRIES = {name: np.array([name in KIND_FIELDS[k] for k in _EVENT_KINDS] + [False]) for name in ("executor", "queue")}

#: The columns an event must carry or leave null, by its kind. A row's *null pattern* has bit i
#: set when _SHAPE_COLUMNS[i] is null there, and always the bit _NEVER.
_SHAPE_COLUMNS: tuple[str, ...] = ("ts", *EVENT_FIELD_COLUMNS, *HEADER_COLUMNS)
_NEVER = 1 << len(_SHAPE_COLUMNS)
assert _NEVER < 1 << 63 and all(set(fields) <= set(_SHAPE_COLUMNS) for fields in KIND_FIELDS.values())


def _null_rule(observation: Observation, kind: str) -> tuple[int, int]:
    """(mask, expected): a row of ``kind`` in a trace at level ``observation`` passes the checks
    of presence in Validator.check iff ``(pattern & mask) == expected``. A kind the level does not
    show, or a column both required and forbidden, expects _NEVER clear: no row passes."""
    if kind == HEADER_KIND:
        return 0, 0  # Validator.check looks at no other column of a header
    if kind not in LEVEL_KINDS[observation]:
        return _NEVER, 0
    mask = expected = 0
    for i, name in enumerate(_SHAPE_COLUMNS):
        optional = observation is Observation.BLACK_BOX and name in BLACK_BOX_OPTIONAL
        required = (name == "ts" or name in KIND_FIELDS[kind]) and not optional
        forbidden = (name in EVENT_FIELD_COLUMNS and name not in KIND_FIELDS[kind]) or name in HEADER_COLUMNS
        if required and forbidden:
            return _NEVER, 0
        if required or forbidden:
            mask |= 1 << i
        if forbidden:
            expected |= 1 << i
    return mask, expected


def _null_table() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """_null_rule per (observation level, kind code), flattened: index level * len(_KIND_CODES) + code;
    the masks, then the expected values. Built by each Validator (about a millisecond), not on import,
    so that the tests judge the rule as it is when they run (docs/checker-mutants.md)."""
    rules = [_null_rule(o, k) for o in _OBSERVATIONS for k in _KIND_CODES]
    return np.array([m for m, _ in rules], np.uint64), np.array([e for _, e in rules], np.uint64)


_EXECUTOR_VALUES = pa.array(sorted(_EXECUTOR_NAMES), pa.string())


def _nulls(column: pa.Array) -> npt.NDArray[np.bool_]:
    """Per row, whether ``column`` is null there."""
    if column.null_count == 0:
        return np.zeros(len(column), np.bool_)
    result: npt.NDArray[np.bool_] = column.is_null().to_numpy(zero_copy_only=False)
    return result


def _codes(column: pa.Array) -> tuple[npt.NDArray[np.intp], list[Any]]:
    """Per row, the index of its value among the column's distinct values; and those values (in
    the dictionary's order). The column has no null index; a dictionary read from
    Parquet may repeat a value or hold values no row uses, and neither shows up here."""
    encoded = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
    first: dict[Any, int] = {}
    canonical = np.array([first.setdefault(v, len(first)) for v in encoded.dictionary.to_pylist()], np.intp)
    codes = canonical[encoded.indices.to_numpy(zero_copy_only=False)]
    used = np.flatnonzero(np.bincount(codes, minlength=len(first)))
    compact = np.zeros(len(first), np.intp)
    compact[used] = np.arange(len(used))
    values = list(first)
    return compact[codes], [values[u] for u in used.tolist()]


def _responses_well_formed(responses: pa.Array, event_rows: npt.NDArray[np.bool_], kind: npt.NDArray[np.intp]) -> bool:
    """Validator._check_responses for every event row: a Response event carries exactly one
    response; every response is an object with request_id and code (remark is a string or
    null by the schema)."""
    lengths = pc.fill_null(pc.list_value_length(responses), 0).to_numpy(zero_copy_only=False)
    if np.any(_IS_RESPONSE[kind] & (lengths != 1)):
        return False
    items = pc.list_flatten(responses)
    if len(items) == 0:
        return True
    broken = _nulls(items) | _nulls(pc.struct_field(items, "request_id")) | _nulls(pc.struct_field(items, "code"))
    owner = pc.list_parent_indices(responses).to_numpy(zero_copy_only=False)
    return not np.any(broken & event_rows[owner])


@dataclass
class _TraceProgress:
    header: TraceHeader
    last_seq: int = 0
    kinds: frozenset[str] = field(default_factory=frozenset)
    last_ts: int | None = None  # the ts of the last event
    # The opaques of its requests so far: each request has its own (the replays map an opaque to
    # one request). Emptied by Validator.close_traces once the trace is whole.
    opaques: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class TraceSummary:
    """What validation leaves of one trace for the checks after it (the header, the number of
    events): small and plain, so that a Spark task that validated the trace sends it to the driver."""

    header: dict[str, Any]  # the header as a record (traces.format.records.header_record)
    last_seq: int
    last_ts: int | None


@dataclass
class Validator:
    """Validates records one at a time, in order; remembers each trace's header, last seq and opaques, and
    counts the events of each kind (the corpus's action coverage: validation reads every record)."""

    traces: dict[str, _TraceProgress] = field(default_factory=dict)
    events: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # events per kind, all traces, no headers
    _presence: tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]] = field(default_factory=_null_table, init=False, repr=False, compare=False)

    @property
    def records(self) -> int:
        """Records taken so far, headers included."""
        return self.events + len(self.traces)

    def header(self, trace_id: str) -> TraceHeader:
        """The header of a trace seen so far."""
        return self.traces[trace_id].header

    def header_records(self) -> dict[str, dict[str, Any]]:
        """Each trace's header as a record, by trace id: what the Spark tasks are given."""
        return {trace_id: header_record(p.header) for trace_id, p in self.traces.items()}

    def events_per_trace(self) -> dict[str, int]:
        """Each trace's number of events (its last seq, since seqs run 1, 2, 3, …), by trace id."""
        return {trace_id: p.last_seq for trace_id, p in self.traces.items()}

    def summaries(self) -> dict[str, TraceSummary]:
        """Each trace's summary, by trace id."""
        return {trace_id: TraceSummary(header_record(p.header), p.last_seq, p.last_ts) for trace_id, p in self.traces.items()}

    def join(self, summaries: Mapping[str, TraceSummary], kinds: Mapping[str, int]) -> None:
        """Take whole traces validated elsewhere (by a Spark task): their summaries and their events
        per kind. Their ids are new here (a trace is validated in one place, in input order)."""
        for trace_id, s in summaries.items():
            assert trace_id not in self.traces, f"trace {trace_id!r} validated in two places"
            header = header_from_record(s.header)
            self.traces[trace_id] = _TraceProgress(header, s.last_seq, LEVEL_KINDS[header.observation], s.last_ts)
        self.events += sum(kinds.values())
        self.kinds.update(kinds)

    def check(self, record: Mapping[str, Any]) -> None:
        """Raise _Bad naming the field if ``record`` is not a valid next record of its trace."""
        for name in ("trace_id", "seq", "kind"):
            _check_type(record, name, _COLUMN_TYPES[name], required=True)
        if not _RECORD_FIELDS.issuperset(record):
            raise _Bad(f"unknown field(s) {[k for k in record if k not in _RECORD_FIELDS]}")
        trace_id, seq, kind = record["trace_id"], record["seq"], record["kind"]
        if kind == HEADER_KIND:
            self._check_header(record)
            return
        if kind not in KINDS and kind != RESPONSE_KIND:
            raise _Bad(f"field 'kind': unknown kind {kind!r} (trace {trace_id!r} seq {seq})")
        progress = self.traces.get(trace_id)
        if progress is None:
            raise _Bad(f"trace {trace_id!r} seq {seq}: event before the trace's header (seq 0, kind {HEADER_KIND})")
        expected = progress.last_seq + 1
        if seq != expected:
            if seq <= progress.last_seq:
                what = "repeats or goes back"
            else:
                what = f"skips seq {expected}..{seq - 1}"
            raise _Bad(f"field 'seq': trace {trace_id!r} seq {seq} after seq {progress.last_seq} {what}")
        if kind not in progress.kinds:
            raise _Bad(
                f"field 'kind': {kind} is not observed at level {progress.header.observation.value!r} "
                f"(trace {trace_id!r} seq {seq})"
            )
        _check_type(record, "ts", "int", required=True)
        partial = progress.header.observation is not Observation.FULL
        if partial and progress.last_ts is not None and record["ts"] < progress.last_ts:
            # A full trace's clock going back is the replay's to judge; below full, the partial
            # replay's search needs the events in time order.
            raise _Bad(
                f"field 'ts': trace {trace_id!r} seq {seq} has ts {record['ts']}, before ts {progress.last_ts} of seq "
                f"{seq - 1}: the events of a {progress.header.observation.value!r} trace must not go back in time"
            )
        black_box = progress.header.observation is Observation.BLACK_BOX
        for name in KIND_FIELDS[kind]:
            optional = black_box and name in BLACK_BOX_OPTIONAL
            _check_type(record, name, _COLUMN_TYPES[name], required=not optional)
        if not _NULL_FIELDS[kind].isdisjoint(record):  # a JSON record usually leaves them out
            for name in _NOT_CARRIED[kind]:
                if record.get(name) is not None:
                    raise _Bad(f"field {name!r} does not belong to kind {kind}")
            for name in HEADER_COLUMNS:
                if record.get(name) is not None:
                    raise _Bad(f"field {name!r} belongs to the header, not to kind {kind}")
        if kind == "RequestArrives":
            if not JAVA_INT_MIN <= record["code"] <= JAVA_INT_MAX:
                raise _Bad(f"field 'code': {record['code']} is not a Java int (RemotingCommand.code)")
            if record["request_id"] in progress.opaques:
                raise _Bad(
                    f"field 'request_id': trace {trace_id!r} seq {seq}: opaque {record['request_id']} arrived before in this trace; "
                    f"each request needs an opaque of its own within a trace (a recorder that sees several clients "
                    f"makes them distinct, e.g. by the connection)"
                )
        for name in ("executor", "queue"):
            if name in KIND_FIELDS[kind] and record[name] not in _EXECUTOR_NAMES:
                raise _Bad(f"field {name!r}: unknown executor {record[name]!r}")
        self._check_responses(record.get("responses"), exactly_one=kind == RESPONSE_KIND)
        if kind == RESPONSE_KIND and progress.header.observation is Observation.QUEUES:
            code = record["responses"][0]["code"]
            if code not in _PUT_PATH_CODES:
                raise _Bad(
                    f"field 'responses[0].code': a {RESPONSE_KIND} event of a 'queues' trace carries an answer written "
                    f"inside the put path (SUCCESS 0 or SYSTEM_ERROR 1), not code {code}: record an answer of a step the "
                    f"level observes on that step's event"
                )
        progress.last_seq = seq
        progress.last_ts = record["ts"]
        if kind == "RequestArrives":
            progress.opaques.add(record["request_id"])
        self.events += 1
        self.kinds[kind] += 1

    def close_traces(self) -> None:
        """The traces taken so far are whole (a layout's unit holds every row of its traces): forget
        what only their later events would be checked against, their opaques."""
        for progress in self.traces.values():
            progress.opaques = set()

    def accept_batch(self, batch: pa.RecordBatch) -> bool:
        """Take every row of ``batch`` (in the reader's schema) if each would pass :meth:`check` in
        turn, and return True; otherwise change nothing and return False.

        post: the state is what :meth:`check` row by row would leave, whenever this returns True.
        """
        n = batch.num_rows
        if n == 0:
            return True
        columns = {name: batch.column(name) for name in batch.schema.names}
        if any(columns[name].null_count for name in ("trace_id", "seq", "kind")):
            return False
        kind_index, kind_names = _codes(columns["kind"])
        if any(k not in _KIND_CODES for k in kind_names):
            return False
        kind = np.array([_KIND_CODES[k] for k in kind_names], np.intp)[kind_index]
        trace, trace_ids = _codes(columns["trace_id"])
        seq: npt.NDArray[np.int64] = columns["seq"].to_numpy()

        # Headers are few (one per trace): Validator.check's own parser judges each.
        header_rows = np.flatnonzero(kind == _HEADER_CODE)
        new: dict[str, tuple[int, TraceHeader]] = {}
        for row, record in zip(header_rows.tolist(), batch.take(pa.array(header_rows)).to_pylist()):
            if record["trace_id"] in self.traces or record["trace_id"] in new:
                return False
            try:
                new[record["trace_id"]] = (row, _parse_header(record))
            except _Bad:
                return False

        # Per distinct trace of the batch: the seq before the batch, the row of its header in the
        # batch (-1: before the batch), its observation level.
        last_seq = np.zeros(len(trace_ids), np.int64)
        last_ts = np.full(len(trace_ids), np.iinfo(np.int64).min, np.int64)
        header_row = np.full(len(trace_ids), -1, np.int64)
        level = np.zeros(len(trace_ids), np.intp)
        for t, trace_id in enumerate(trace_ids):
            progress = self.traces.get(trace_id)
            if progress is not None:
                last_seq[t], header = progress.last_seq, progress.header
                if progress.last_ts is not None:
                    last_ts[t] = progress.last_ts
            elif trace_id in new:
                header_row[t], header = new[trace_id]
            else:
                return False  # its rows are events before any header
            level[t] = _OBSERVATIONS.index(header.observation)
        if last_seq.max() > np.iinfo(np.int64).max - n:
            return False  # the expected seqs below would overflow

        events = kind != _HEADER_CODE
        event_rows = np.flatnonzero(events)
        if np.any(event_rows <= header_row[trace[event_rows]]):
            return False  # an event before its trace's header

        # Each trace's events, in row order, are last_seq + 1, + 2, ...: a stable sort by trace
        # keeps row order within a trace; the rank within its trace gives each event's seq.
        event_trace = trace[event_rows]
        order = np.argsort(event_trace, kind="stable")
        by_trace = event_trace[order]
        starts = np.flatnonzero(np.r_[True, by_trace[1:] != by_trace[:-1]]) if len(by_trace) else np.zeros(0, np.intp)
        counts = np.diff(np.r_[starts, len(by_trace)])
        rank = np.arange(len(by_trace)) - np.repeat(starts, counts)
        if not np.array_equal(seq[event_rows][order], last_seq[by_trace] + rank + 1):
            return False
        # Below full, time never goes back within a trace (nulls are judged below, by the row path).
        ts_column = columns["ts"]
        if ts_column.null_count and _nulls(ts_column)[event_rows].any():
            return False
        ts = ts_column.fill_null(0).to_numpy()[event_rows][order]
        before = np.where(rank == 0, last_ts[by_trace], np.r_[np.iinfo(np.int64).min, ts[:-1]])
        if np.any((level[by_trace] != _OBSERVATIONS.index(Observation.FULL)) & (ts < before)):
            return False

        # Presence of every column, and the kind's level, in one comparison per row.
        pattern = np.full(n, _NEVER, np.uint64)
        for i, name in enumerate(_SHAPE_COLUMNS):
            if columns[name].null_count == n:
                pattern |= np.uint64(1 << i)
            elif columns[name].null_count:
                pattern |= _nulls(columns[name]).astype(np.uint64) << np.uint64(i)
        rule = level[trace] * len(_KIND_CODES) + kind
        null_mask, null_expected = self._presence
        if np.any((pattern & null_mask[rule]) != null_expected[rule]):
            return False
        arrivals = _IS_ARRIVAL[kind]
        opaques: dict[int, list[int]] = {}  # per trace of the batch, the opaques of its arrivals
        if np.any(arrivals):
            codes = pc.min_max(columns["code"].filter(pa.array(arrivals))).as_py()
            if codes["min"] < JAVA_INT_MIN or codes["max"] > JAVA_INT_MAX:
                return False
            ids: npt.NDArray[np.int64] = columns["request_id"].filter(pa.array(arrivals)).to_numpy()
            owner = trace[arrivals]
            by = np.lexsort((ids, owner))
            owner, ids = owner[by], ids[by]
            if np.any((owner[1:] == owner[:-1]) & (ids[1:] == ids[:-1])):
                return False  # an opaque arrives twice in the batch
            first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
            for t, start, end in zip(owner[first].tolist(), first.tolist(), np.r_[first[1:], len(owner)].tolist()):
                opaques[t] = ids[start:end].tolist()
                progress = self.traces.get(trace_ids[t])
                if progress is not None and not progress.opaques.isdisjoint(opaques[t]):
                    return False  # an opaque that arrived in an earlier batch
        for name, carries in _CARRIES.items():
            carriers = carries[kind]
            if np.any(carriers) and not pc.all(pc.is_in(columns[name].filter(pa.array(carriers)), _EXECUTOR_VALUES)).as_py():
                return False
        if not _responses_well_formed(columns["responses"], events, kind):
            return False
        put_path = _IS_RESPONSE[kind] & events & (level[trace] == _OBSERVATIONS.index(Observation.QUEUES))
        if np.any(put_path):
            answered = pc.struct_field(pc.list_flatten(columns["responses"].filter(pa.array(put_path))), "code")
            if not pc.all(pc.is_in(answered, _PUT_PATH_CODE_VALUES)).as_py():
                return False

        for trace_id, (_, header) in new.items():
            self.traces[trace_id] = _TraceProgress(header, 0, LEVEL_KINDS[header.observation])
        for t, ids_of_trace in opaques.items():
            self.traces[trace_ids[t]].opaques.update(ids_of_trace)
        for t, count, end in zip(by_trace[starts].tolist(), counts.tolist(), (starts + counts - 1).tolist()):
            self.traces[trace_ids[t]].last_seq = int(last_seq[t]) + count
            self.traces[trace_ids[t]].last_ts = int(ts[end])
        self.events += len(event_rows)
        for code, count in enumerate(np.bincount(kind[event_rows], minlength=len(_EVENT_KINDS)).tolist()):
            if count:
                self.kinds[_EVENT_KINDS[code]] += count
        return True

    def _check_header(self, record: Mapping[str, Any]) -> None:
        trace_id = record["trace_id"]
        if trace_id in self.traces:
            raise _Bad(f"trace {trace_id!r} has a second header at seq {record['seq']}")
        header = _parse_header(record)
        self.traces[trace_id] = _TraceProgress(header, 0, LEVEL_KINDS[header.observation])

    @staticmethod
    def _check_responses(responses: object, exactly_one: bool) -> None:
        if responses is None:
            responses = []
        if not isinstance(responses, list):
            raise _Bad("field 'responses' must be a list")
        if exactly_one and len(responses) != 1:
            raise _Bad(f"field 'responses': a {RESPONSE_KIND} event carries exactly one response, got {len(responses)}")
        for i, r in enumerate(responses):
            if not isinstance(r, dict):
                raise _Bad(f"field 'responses[{i}]' must be an object")
            for name, kind in (("request_id", "int"), ("code", "int")):
                try:
                    _check_type(r, name, kind, required=True)
                except _Bad as e:
                    raise _Bad(f"responses[{i}]: {e}") from None
            if r.get("remark") is not None and not isinstance(r["remark"], str):
                raise _Bad(f"field 'responses[{i}].remark' must be a string or null")


@dataclass(frozen=True)
class Record:
    """A validated record with where it came from."""

    where: Location
    data: dict[str, Any]


def read_records(paths: Sequence[str], validator: Validator | None = None) -> Iterator[Record]:
    """Every record of every file, validated; raises TraceInputError listing the first problem of each bad file.

    Records of a good file are yielded as they are read; a later bad file still raises, so a
    consumer must treat its results as void when this raises.
    """
    return _read(paths, validator or Validator(), keep=True)


def validate(paths: Sequence[str]) -> Validator:
    """Validate every record of ``paths`` (streaming); the validator then holds each trace's header."""
    validator = Validator()
    for _ in _read(paths, validator, keep=False):
        pass
    return validator


def _read(paths: Sequence[str], validator: Validator, keep: bool) -> Iterator[Record]:
    """The records of every file, validated; without ``keep``, a Parquet batch that is valid as a
    whole is taken without building its records (only validation wants nothing but the verdict)."""
    problems: list[str] = []
    located: list[dict[str, Any]] = []
    for source in resolve(paths):
        before = validator.records
        try:
            yield from _file_records(source, validator, keep)
        except InputProblem as e:
            problems.append(str(e))
            located.append(e.as_data())
            continue
        if validator.records == before:
            problems.append(f"{source}: {EMPTY}")
            located.append({"file": source, "message": EMPTY})
    if problems:
        raise TraceInputError(problems, located)


#: The problem of a file that holds no record.
EMPTY = "empty: no trace records"


def check_part(source: str, validator: Validator, row_groups: Sequence[int] | None = None, traces: frozenset[str] | None = None) -> None:
    """Validate the records of one file, or of the given row groups of a Parquet file, into
    ``validator``, in order (the work of a Spark task, :mod:`traces.checking.validation`). With
    ``traces``, only their records, and those with no trace id (which are not valid). Raises
    InputProblem at the first problem, naming the file's own line or row."""
    for _ in _file_records(source, validator, keep=False, row_groups=row_groups, traces=traces):
        pass


def _file_records(
    source: str, validator: Validator, keep: bool, row_groups: Sequence[int] | None = None, traces: frozenset[str] | None = None
) -> Iterator[Record]:
    if not _is_parquet(source):
        records = _jsonl_records(source)
        if traces is not None:
            records = ((where, r) for where, r in records if not isinstance(r.get("trace_id"), str) or r["trace_id"] in traces)
        yield from _checked(records, validator)
        return
    wanted = None if traces is None else pa.array(sorted(traces), pa.string())
    for first, batch in _parquet_batches(source, row_groups):
        rows = None  # the file's row of each of the batch's rows, when the batch holds other traces' rows too
        if wanted is not None:
            ids = batch.column("trace_id")
            mine = pc.or_(pc.is_in(ids, value_set=wanted), pc.is_null(ids))
            if not pc.all(mine).as_py():
                rows = (first + np.flatnonzero(mine.to_numpy(zero_copy_only=False))).tolist()
                batch = batch.filter(mine)
        if validator.accept_batch(batch):
            if keep:
                yield from (Record(where, data) for where, data in _rows(source, first, batch, rows))
        else:
            # Row by row from the state before the batch: the same first problem and message.
            yield from _checked(_rows(source, first, batch, rows), validator)


def _checked(records: Iterator[tuple[Location, dict[str, Any]]], validator: Validator) -> Iterator[Record]:
    for where, data in records:
        try:
            validator.check(data)
        except _Bad as e:
            raise InputProblem(where, str(e)) from None
        yield Record(where, data)
