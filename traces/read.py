"""Reading and validating traces: JSON Lines or Parquet; files, directories or globs.

Validation streams: one record at a time, with per-trace bookkeeping only (last ``seq``, the
header). The first problem of each file is reported with the file, the line (JSON Lines) or
row (Parquet) and the field; any problem makes the input invalid (exit code 2), so an
unreadable line can never be skipped into a pass.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spec.codes import RequestCode
from spec.profiles import ExecutorName
from traces.format import (
    ARROW_SCHEMA,
    BLACK_BOX_OPTIONAL,
    EVENT_FIELD_COLUMNS,
    FORMAT_VERSION,
    HEADER_COLUMNS,
    HEADER_KIND,
    KIND_FIELDS,
    KINDS,
    LEVEL_KINDS,
    RESPONSE_KIND,
    ConfigError,
    Observation,
    TraceHeader,
    header_from_record,
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
}
assert set(_COLUMN_TYPES) | {"responses", "config"} == set(ARROW_SCHEMA.names)


class TraceInputError(Exception):
    """The input cannot be read as traces; ``problems`` holds one message per bad file."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = tuple(problems)


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


def resolve(paths: Sequence[str]) -> list[Path]:
    """The trace files named by ``paths``: files, directories (searched recursively) and globs."""
    files: list[Path] = []
    missing: list[str] = []
    for p in paths:
        matches = sorted(glob.glob(p, recursive=True)) if any(c in p for c in "*?[") else [p]
        if not matches or not all(Path(m).exists() for m in matches):
            missing.append(f"{p}: no such file or directory")
            continue
        for m in map(Path, matches):
            if m.is_dir():
                files += sorted(
                    f for f in m.rglob("*") if f.is_file() and f.suffix in (".jsonl", ".json", ".parquet")
                )
            else:
                files.append(m)
    if missing:
        raise TraceInputError(missing)
    if not files:
        raise TraceInputError([f"{', '.join(paths)}: no trace files (*.jsonl, *.parquet) found"])
    return files


def _is_parquet(path: Path) -> bool:
    return path.suffix == ".parquet"


def _jsonl_records(path: Path) -> Iterator[tuple[Location, dict[str, Any]]]:
    with path.open("rb") as f:
        number = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            where = Location(str(path), line=number)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise _Located(where, f"line is longer than {MAX_LINE_BYTES} bytes; not a trace record")
            if not raw.strip():
                raise _Located(where, "empty line")
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise _Located(where, f"malformed JSON: {e}") from None
            if not isinstance(record, dict):
                raise _Located(where, f"a record must be a JSON object, got {type(record).__name__}")
            yield where, record


def _parquet_records(path: Path) -> Iterator[tuple[Location, dict[str, Any]]]:
    where = Location(str(path), row=0)
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise _Located(where, f"not a readable Parquet file: {e}") from None
    schema = pf.schema_arrow
    for expected in ARROW_SCHEMA:
        if expected.name not in schema.names:
            raise _Located(where, f"field {expected.name!r}: column missing (expected {expected.type})")
        actual = schema.field(expected.name).type
        if actual != expected.type:
            raise _Located(where, f"field {expected.name!r}: column has type {actual}, expected {expected.type}")
    extra = [n for n in schema.names if n not in ARROW_SCHEMA.names]
    if extra:
        raise _Located(where, f"unknown column(s) {extra}")
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=list(ARROW_SCHEMA.names)):
            for record in batch.to_pylist():
                yield Location(str(path), row=row), record
                row += 1
    except (pa.ArrowException, OSError) as e:
        raise _Located(Location(str(path), row=row), f"unreadable Parquet data: {e}") from None


class _Located(Exception):
    def __init__(self, where: Location, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


def raw_records(path: Path) -> Iterator[tuple[Location, dict[str, Any]]]:
    """The records of one file, unvalidated, with their locations."""
    return _parquet_records(path) if _is_parquet(path) else _jsonl_records(path)


def _check_type(record: Mapping[str, Any], name: str, kind: str, required: bool) -> None:
    value = record.get(name)
    if value is None:
        if required:
            raise _Bad(f"field {name!r} is missing")
        return
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "str": isinstance(value, str),
        "bool": isinstance(value, bool),
    }[kind]
    if not ok:
        raise _Bad(f"field {name!r} must be {kind}, got {json.dumps(value)[:80]}")


_KNOWN_CODES = {c.value for c in RequestCode}
_EXECUTOR_NAMES = {n.value for n in ExecutorName}


@dataclass
class _TraceProgress:
    header: TraceHeader
    last_seq: int = 0
    kinds: frozenset[str] = field(default_factory=frozenset)


@dataclass
class Validator:
    """Validates records one at a time, in order; remembers each trace's header and last seq."""

    traces: dict[str, _TraceProgress] = field(default_factory=dict)
    events: int = 0

    def header(self, trace_id: str) -> TraceHeader:
        """The header of a trace seen so far."""
        return self.traces[trace_id].header

    def check(self, record: Mapping[str, Any]) -> None:
        """Raise _Bad naming the field if ``record`` is not a valid next record of its trace."""
        for name in ("trace_id", "seq", "kind"):
            _check_type(record, name, _COLUMN_TYPES[name], required=True)
        unknown = [k for k in record if k not in _COLUMN_TYPES and k not in ("responses", "config")]
        if unknown:
            raise _Bad(f"unknown field(s) {unknown}")
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
        black_box = progress.header.observation is Observation.BLACK_BOX
        for name in KIND_FIELDS[kind]:
            optional = black_box and name in BLACK_BOX_OPTIONAL
            _check_type(record, name, _COLUMN_TYPES[name], required=not optional)
        for name in EVENT_FIELD_COLUMNS:
            if name not in KIND_FIELDS[kind] and record.get(name) is not None:
                raise _Bad(f"field {name!r} does not belong to kind {kind}")
        for name in HEADER_COLUMNS:
            if record.get(name) is not None:
                raise _Bad(f"field {name!r} belongs to the header, not to kind {kind}")
        if kind in ("RequestArrives",) and record["code"] not in _KNOWN_CODES:
            raise _Bad(f"field 'code': {record['code']} is not a request code the spec models")
        for name in ("executor", "queue"):
            if name in KIND_FIELDS[kind] and record[name] not in _EXECUTOR_NAMES:
                raise _Bad(f"field {name!r}: unknown executor {record[name]!r}")
        self._check_responses(record.get("responses"), exactly_one=kind == RESPONSE_KIND)
        progress.last_seq = seq
        self.events += 1

    def _check_header(self, record: Mapping[str, Any]) -> None:
        trace_id, seq = record["trace_id"], record["seq"]
        if trace_id in self.traces:
            raise _Bad(f"trace {trace_id!r} has a second header at seq {seq}")
        if seq != 0:
            raise _Bad(f"field 'seq': a header has seq 0, got {seq}")
        for name in HEADER_COLUMNS:
            if name != "config":
                _check_type(record, name, "str", required=True)
        if record["format_version"] != FORMAT_VERSION:
            raise _Bad(f"field 'format_version': unknown format version {record['format_version']!r}; this reader knows {FORMAT_VERSION!r}")
        if record["observation"] not in {o.value for o in Observation}:
            raise _Bad(f"field 'observation': {record['observation']!r} is not one of {[o.value for o in Observation]}")
        config = record.get("config")
        if isinstance(config, str):
            try:
                config = json.loads(config)
            except json.JSONDecodeError as e:
                raise _Bad(f"field 'config': malformed JSON: {e}") from None
        if not isinstance(config, dict):
            raise _Bad("field 'config' must be an object")
        try:
            header = header_from_record({**record, "config": config})
        except ConfigError as e:
            raise _Bad(f"field {e}") from None
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
    validator = validator or Validator()
    problems: list[str] = []
    for path in resolve(paths):
        before = validator.events + len(validator.traces)
        try:
            for where, data in raw_records(path):
                try:
                    validator.check(data)
                except _Bad as e:
                    raise _Located(where, str(e)) from None
                yield Record(where, data)
        except _Located as e:
            problems.append(str(e))
            continue
        if validator.events + len(validator.traces) == before:
            problems.append(f"{path}: empty: no trace records")
    if problems:
        raise TraceInputError(problems)


def validate(paths: Sequence[str]) -> Validator:
    """Validate every record of ``paths`` (streaming); the validator then holds each trace's header."""
    validator = Validator()
    for _ in read_records(paths, validator):
        pass
    return validator
