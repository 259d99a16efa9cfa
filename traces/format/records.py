"""The trace format, version 1: one broker run as a header record followed by events.

A trace is a sequence of flat records sharing one schema (:data:`ARROW_SCHEMA`), so that a
JSON Lines file and a Parquet dataset carry the same columns and Spark reads either with one
schema. ``seq`` 0 is the header (kind :data:`HEADER_KIND`); events follow with ``seq`` 1, 2, …
without gaps. An event's ``kind`` is the name of a spec action (:data:`spec.machine.ACTION_TYPES`)
and its fields are that action's fields, plus the responses the broker wrote in that step.
The black-box kind :data:`RESPONSE_KIND` records a response seen on the wire with no internal
step. The prose definition is ``docs/trace-format.md``; the JSON Schema
``traces/format/trace-event.schema.json`` is generated from this module (:func:`json_schema`).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from spec.actors import Action
from spec.frozen import replace
from spec.machine import ACTION_TYPES, Environment
from spec.remoting import RequestArrives
from spec.config import BrokerConfig, ExecutorConfig, FlushDiskType, RateLimitConfig
from spec.profiles import ExecutorName, Profile
from spec.releases import profile

FORMAT_VERSION = "1"
HEADER_KIND = "TraceHeader"
RESPONSE_KIND = "Response"


class Observation(enum.Enum):
    """How much of the broker a trace shows; each level includes the ones before it."""

    BLACK_BOX = "black-box"  # only arrivals and responses: what a proxy in front of the broker sees
    QUEUES = "queues"  # + dispatch, workers taking and finishing tasks, fast failure, operator
    FULL = "full"  # + the put lock, mapped files, the pool and the commit service: every action


# -- Columns -----------------------------------------------------------------------------------

#: Arrow type of each action field, by the field's annotation in its action class.
_FIELD_TYPES: Mapping[str, pa.DataType] = {
    "int": pa.int64(),
    "bool": pa.bool_(),
    "str": pa.string(),
    "ExecutorName": pa.string(),  # the executor's name value: "send", "pull", …
}

RESPONSE_TYPE = pa.struct(
    [
        pa.field("request_id", pa.int64()),  # the opaque the response echoes
        pa.field("code", pa.int64()),  # the response code
        pa.field("remark", pa.string()),  # the remark, verbatim; null if the broker wrote none
    ]
)


def _action_fields(kind: type) -> list[tuple[str, str]]:
    """(field, annotation name) of one action class (compiled by mypyc, a class is annotated with classes, not strings)."""
    return [(f.name, f.type if isinstance(f.type, str) else f.type.__name__) for f in dataclasses.fields(kind)]


KINDS: dict[str, type] = {k.__name__: k for k in ACTION_TYPES}

#: The fields each event kind must carry (besides trace_id, seq, ts, kind, responses).
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    **{name: tuple(f for f, _ in _action_fields(k)) for name, k in KINDS.items()},
    # RequestArrives also names the opaque, which the spec numbers itself (next_request_id).
    "RequestArrives": tuple(f for f, _ in _action_fields(RequestArrives)) + ("request_id",),
    RESPONSE_KIND: (),
}

#: Fields a black-box RequestArrives may leave null: which IO thread decoded it is internal.
BLACK_BOX_OPTIONAL: frozenset[str] = frozenset({"io_thread"})

_EVENT_COLUMNS: dict[str, pa.DataType] = {}
for _kind in ACTION_TYPES:
    for _name, _annotation in _action_fields(_kind):
        _EVENT_COLUMNS.setdefault(_name, _FIELD_TYPES[_annotation])
_EVENT_COLUMNS["request_id"] = pa.int64()

HEADER_COLUMNS: dict[str, pa.DataType] = {
    "format_version": pa.string(),
    "implementation": pa.string(),
    "implementation_version": pa.string(),
    "profile": pa.string(),
    "observation": pa.string(),
    "config": pa.string(),  # JSON text of the configuration object (an object in JSON Lines)
    # The hidden environment the trace declares (JSON text, an object in JSON Lines; null or
    # absent: UNDECLARED_ENVIRONMENT). Read only by the partial replay.
    "environment": pa.string(),
    # Why the recorder could not record every step of the run (null or absent: it did). A reader
    # refuses a trace that says so: what is missing could hide a violation or fake one.
    "recording_incomplete": pa.string(),
}
#: Header columns a header may leave out or null.
OPTIONAL_HEADER_COLUMNS: frozenset[str] = frozenset({"recording_incomplete", "environment"})
#: Header columns that hold a JSON object (text in Parquet), not a string.
OBJECT_HEADER_COLUMNS: tuple[str, ...] = ("config", "environment")

ARROW_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("ts", pa.int64()),
        pa.field("kind", pa.string(), nullable=False),
        *(pa.field(n, t) for n, t in _EVENT_COLUMNS.items()),
        pa.field("responses", pa.list_(RESPONSE_TYPE)),
        *(pa.field(n, t) for n, t in HEADER_COLUMNS.items()),
    ]
)
COLUMNS: tuple[str, ...] = tuple(ARROW_SCHEMA.names)
#: The columns an event row uses (every column but the header's).
EVENT_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if c not in HEADER_COLUMNS)
EVENT_FIELD_COLUMNS: tuple[str, ...] = tuple(_EVENT_COLUMNS)
#: String columns of few distinct values: read dictionary-encoded, each distinct value is decoded once.
REPEATED_STRINGS: tuple[str, ...] = ("trace_id", "kind", "executor", "queue", "topic")

#: Event kinds visible at each observation level.
_QUEUE_LEVEL_EXCLUDED = frozenset(
    {
        "WorkerPassesPutCheck",
        "WorkerAcquiresPutLock",
        "WorkerCreatesMappedFile",
        "WorkerAppendsAndUnlocks",
        "WorkerThrowsInsideLock",
        "CommitServiceCommits",
        "CommitServiceReturnsBuffer",
        "HaServiceAcquiresPutLock",
        "HaServiceReleasesPutLock",
    }
)
LEVEL_KINDS: dict[Observation, frozenset[str]] = {
    Observation.BLACK_BOX: frozenset({"RequestArrives", RESPONSE_KIND}),
    Observation.QUEUES: frozenset(KINDS) - _QUEUE_LEVEL_EXCLUDED | {RESPONSE_KIND},
    Observation.FULL: frozenset(KINDS) | {RESPONSE_KIND},
}


# -- Records <-> spec values ---------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedResponse:
    """A response as the broker wrote it: the opaque, the code, the remark."""

    request_id: int
    code: int
    remark: str | None


@dataclass(frozen=True)
class TraceHeader:
    """The header record of a trace: who produced it and under which configuration."""

    trace_id: str
    implementation: str
    implementation_version: str
    profile: str
    observation: Observation
    config: BrokerConfig
    environment: Environment | None = None  # the hidden environment it declares (declared_environment); None: none declared

    def hidden_environment(self) -> Environment:
        """What the environment may do that the trace need not show: its declaration (the
        declarable fields alone, :func:`declared_environment`), or :data:`UNDECLARED_ENVIRONMENT`."""
        return UNDECLARED_ENVIRONMENT if self.environment is None else declared_environment(self.environment)


def config_to_json(config: BrokerConfig) -> dict[str, Any]:
    """The header's ``config`` object: every BrokerConfig field, enums by value."""
    return {
        "processors": config.processors,
        "io_threads": config.io_threads,
        "executors": [
            {"name": e.name.value, "threads": e.threads, "capacity": e.capacity} for e in config.executors
        ],
        "queue_waits": {name.value: wait for name, wait in config.queue_waits},
        "os_page_cache_busy_timeout_ms": config.os_page_cache_busy_timeout_ms,
        "fast_failure_enable": config.fast_failure_enable,
        "transient_store_pool_enable": config.transient_store_pool_enable,
        "transient_store_pool_size": config.transient_store_pool_size,
        "mapped_file_size": config.mapped_file_size,
        "flush_disk_type": config.flush_disk_type.value,
        "default_processor_registered": config.default_processor_registered,
        "rate_limit": dataclasses.asdict(config.rate_limit),
        "start_time_ms": config.start_time_ms,
        "fast_failure_initial_delay_ms": config.fast_failure_initial_delay_ms,
        "fast_failure_period_ms": config.fast_failure_period_ms,
    }


class ConfigError(ValueError):
    """The header's config object does not describe a broker; the message names the field."""


def _get(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``obj[key]``, of type ``kind``: a type, or a tuple of types without bool (no field is a flag or something else)."""
    if key not in obj:
        raise ConfigError(f"{where}.{key} is missing")
    value = obj[key]
    # bool is an int in Python; a JSON true must not pass for a thread count, only for a flag.
    if isinstance(value, bool) and kind is not bool:
        raise ConfigError(f"{where}.{key} must be {_type_name(kind)}, got {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"{where}.{key} must be {_type_name(kind)}, got {value!r}")
    return value


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join("null" if k is type(None) else k.__name__ for k in kinds)


def config_from_json(profile_name: str, obj: Mapping[str, Any]) -> BrokerConfig:
    """The BrokerConfig a header describes, under the named profile; ConfigError names a bad field."""
    try:
        prof = profile(profile_name)
    except ValueError as e:
        raise ConfigError(f"profile: {e}") from None
    where = "config"
    executors = []
    for i, item in enumerate(_get(obj, "executors", list, where)):
        ew = f"{where}.executors[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{ew} must be an object")
        executors.append(
            ExecutorConfig(
                name=_executor_name(_get(item, "name", str, ew), f"{ew}.name"),
                threads=_get(item, "threads", int, ew),
                capacity=_get(item, "capacity", (int, type(None)), ew),
            )
        )
    waits = _get(obj, "queue_waits", dict, where)
    rate = _get(obj, "rate_limit", dict, where)
    # Read before the try: ConfigError is a ValueError, and a missing or non-string value must keep its own message.
    flush_name = _get(obj, "flush_disk_type", str, where)
    try:
        flush = FlushDiskType(flush_name)
    except ValueError:
        raise ConfigError(f"{where}.flush_disk_type must be one of {[f.value for f in FlushDiskType]}, got {flush_name!r}") from None
    config = BrokerConfig(
        profile=prof,
        processors=_get(obj, "processors", int, where),
        io_threads=_get(obj, "io_threads", int, where),
        executors=tuple(executors),
        queue_waits=_queue_waits(prof, waits, f"{where}.queue_waits"),
        os_page_cache_busy_timeout_ms=_get(obj, "os_page_cache_busy_timeout_ms", int, where),
        fast_failure_enable=_get(obj, "fast_failure_enable", bool, where),
        transient_store_pool_enable=_get(obj, "transient_store_pool_enable", bool, where),
        transient_store_pool_size=_get(obj, "transient_store_pool_size", int, where),
        mapped_file_size=_get(obj, "mapped_file_size", int, where),
        flush_disk_type=flush,
        default_processor_registered=_get(obj, "default_processor_registered", bool, where),
        rate_limit=RateLimitConfig(
            enabled=_get(rate, "enabled", bool, f"{where}.rate_limit"),
            default_qps=float(_get(rate, "default_qps", (int, float), f"{where}.rate_limit")),
            send_msg_back_qps=float(_get(rate, "send_msg_back_qps", (int, float), f"{where}.rate_limit")),
            circuit_breaker_open_micros=_get(rate, "circuit_breaker_open_micros", int, f"{where}.rate_limit"),
        ),
        start_time_ms=_get(obj, "start_time_ms", int, where),
        fast_failure_initial_delay_ms=_get(obj, "fast_failure_initial_delay_ms", int, where),
        fast_failure_period_ms=_get(obj, "fast_failure_period_ms", int, where),
    )
    try:
        config.validate()
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None  # named like every other problem of the header
    return config


def _queue_waits(prof: Profile, waits: Mapping[str, Any], where: str) -> tuple[tuple[ExecutorName, int], ...]:
    """The waits in the profile's phase-2 order (the order fast failure scans the queues), whatever
    the order of the JSON object's keys."""
    named = {_executor_name(name, where): _get(waits, name, int, where) for name in waits}
    cleaned = [queue for queue, _ in prof.cleaned_queues]
    stray = [q.value for q in named if q not in cleaned]
    if stray:
        raise ConfigError(f"{where}: profile {prof.version} does not clean queue(s) {stray}")
    return tuple((queue, named[queue]) for queue, _ in prof.cleaned_queues if queue in named)


def _executor_name(value: str, where: str) -> ExecutorName:
    try:
        return ExecutorName(value)
    except ValueError:
        raise ConfigError(f"{where}: unknown executor {value!r}; known: {[n.value for n in ExecutorName]}") from None


# -- The declared environment ----------------------------------------------------------------------

#: What a trace may declare of its environment: the fields of :class:`spec.machine.Environment` that
#: let the outside world take a step the trace need not show (the requests and the clock are the
#: trace's own events). Each names the environment actions it allows: ``exceptions_in_lock``
#: WorkerThrowsInsideLock, ``ha_appends`` the HA service's put lock, ``foreign_tasks`` /
#: ``max_foreign_tasks`` InternalTaskSubmitted, ``limiter_overflows`` RateLimitHandlerFailsOpen,
#: ``fast_failure_toggles`` and ``queue_wait_changes`` an operator's OperatorSets*.
DECLARED_ENVIRONMENT_FIELDS: tuple[str, ...] = (
    "exceptions_in_lock",
    "ha_appends",
    "foreign_tasks",
    "max_foreign_tasks",
    "limiter_overflows",
    "fast_failure_toggles",
    "queue_wait_changes",
)

#: A declaration of none of them: the outside world only sends what the trace shows.
QUIET_ENVIRONMENT = Environment(requests=(), max_requests=0, clock_steps=(), max_elapsed_ms=0)
#: What the partial replay assumes of a trace that declares nothing (the header has no
#: ``environment``): the quiet environment, except that a worker may throw inside the put lock, a
#: fault whose answer (SYSTEM_ERROR) the trace shows wherever it is answered.
UNDECLARED_ENVIRONMENT = replace(QUIET_ENVIRONMENT, exceptions_in_lock=True)


def declared_environment(env: Environment) -> Environment:
    """The part of ``env`` a trace declares (:data:`DECLARED_ENVIRONMENT_FIELDS`), the rest quiet."""
    return replace(QUIET_ENVIRONMENT, **{name: getattr(env, name) for name in DECLARED_ENVIRONMENT_FIELDS})


def environment_to_json(env: Environment) -> dict[str, Any]:
    """The header's ``environment`` object: every declared field, executors by name."""
    return {
        "exceptions_in_lock": env.exceptions_in_lock,
        "ha_appends": env.ha_appends,
        "foreign_tasks": [name.value for name in env.foreign_tasks],
        "max_foreign_tasks": env.max_foreign_tasks,
        "limiter_overflows": env.limiter_overflows,
        "fast_failure_toggles": list(env.fast_failure_toggles),
        "queue_wait_changes": [{"queue": queue.value, "wait_ms": wait} for queue, wait in env.queue_wait_changes],
    }


def environment_from_json(config: BrokerConfig, obj: Mapping[str, Any]) -> Environment:
    """The environment a header's ``environment`` object declares for a broker of ``config``; a
    field left out declares none of its kind. ConfigError names a bad field."""
    where = "environment"
    stray = sorted(set(obj) - set(DECLARED_ENVIRONMENT_FIELDS))
    if stray:
        raise ConfigError(f"{where}: unknown field(s) {stray}; known: {list(DECLARED_ENVIRONMENT_FIELDS)}")

    def items(key: str, kind: type) -> list[Any]:
        """The list ``key`` holds (none if left out), each item of type ``kind``."""
        values = _get(obj, key, list, where) if key in obj else []
        return [_get({f"{key}[{i}]": v}, f"{key}[{i}]", kind, where) for i, v in enumerate(values)]

    def flag(key: str) -> bool:
        return bool(_get(obj, key, bool, where)) if key in obj else False

    executors = [e.name for e in config.executors]
    foreign = tuple(_executor_name(v, f"{where}.foreign_tasks[{i}]") for i, v in enumerate(items("foreign_tasks", str)))
    for i, name in enumerate(foreign):
        if name not in executors:
            raise ConfigError(f"{where}.foreign_tasks[{i}]: the broker has no {name.value!r} executor; it has {[e.value for e in executors]}")
    most = _get(obj, "max_foreign_tasks", int, where) if "max_foreign_tasks" in obj else 0
    if most < 0 or (most > 0) != bool(foreign):
        raise ConfigError(
            f"{where}.max_foreign_tasks must be at least 1 exactly when foreign_tasks names an executor, got {most} with foreign_tasks {[n.value for n in foreign]}"
        )
    toggles = tuple(items("fast_failure_toggles", bool))
    waits: list[tuple[ExecutorName, int]] = []
    cleaned = {queue for queue, _ in config.queue_waits}
    for i, item in enumerate(items("queue_wait_changes", dict)):
        iw = f"{where}.queue_wait_changes[{i}]"
        if set(item) != {"queue", "wait_ms"}:
            raise ConfigError(f"{iw} must be an object with exactly 'queue' and 'wait_ms', got {json.dumps(item)[:80]}")
        queue = _executor_name(_get(item, "queue", str, iw), f"{iw}.queue")
        if queue not in cleaned:
            raise ConfigError(f"{iw}.queue: fast failure does not clean queue {queue.value!r} here; it cleans {[q.value for q, _ in config.queue_waits]}")
        wait = _get(item, "wait_ms", int, iw)
        if wait < 0:
            raise ConfigError(f"{iw}.wait_ms must be at least 0, got {wait}")
        waits.append((queue, wait))
    for key, values in (("foreign_tasks", foreign), ("fast_failure_toggles", toggles), ("queue_wait_changes", tuple(waits))):
        if len(set(values)) != len(values):
            raise ConfigError(f"{where}.{key} names a value twice: {json.dumps(obj[key])[:80]}")
    return replace(
        QUIET_ENVIRONMENT,
        exceptions_in_lock=flag("exceptions_in_lock"),
        ha_appends=flag("ha_appends"),
        foreign_tasks=foreign,
        max_foreign_tasks=most,
        limiter_overflows=flag("limiter_overflows"),
        fast_failure_toggles=toggles,
        queue_wait_changes=tuple(waits),
    )


def header_record(header: TraceHeader) -> dict[str, Any]:
    """The header as a flat record (``config`` as a JSON object)."""
    return {
        "trace_id": header.trace_id,
        "seq": 0,
        "ts": header.config.start_time_ms,
        "kind": HEADER_KIND,
        "format_version": FORMAT_VERSION,
        "implementation": header.implementation,
        "implementation_version": header.implementation_version,
        "profile": header.profile,
        "observation": header.observation.value,
        "config": config_to_json(header.config),
        **({} if header.environment is None else {"environment": environment_to_json(header.environment)}),
    }


def header_from_record(record: Mapping[str, Any]) -> TraceHeader:
    """The header a validated header record describes (``config`` and ``environment`` as objects or JSON text)."""
    objects: dict[str, Any] = {name: json.loads(text) if isinstance(text := record.get(name), str) else text for name in OBJECT_HEADER_COLUMNS}
    config = config_from_json(record["profile"], objects["config"])
    environment = objects["environment"]
    return TraceHeader(
        trace_id=record["trace_id"],
        implementation=record["implementation"],
        implementation_version=record["implementation_version"],
        profile=record["profile"],
        observation=Observation(record["observation"]),
        config=config,
        environment=None if environment is None else environment_from_json(config, environment),
    )


def _encode(value: object) -> object:
    if isinstance(value, enum.Enum):
        return value.value
    return value


def event_record(
    trace_id: str, seq: int, ts: int, action: Action, responses: Sequence[RecordedResponse], request_id: int | None = None
) -> dict[str, Any]:
    """One event as a flat record; ``request_id`` is the opaque of a RequestArrives."""
    record: dict[str, Any] = {"trace_id": trace_id, "seq": seq, "ts": ts, "kind": type(action).__name__}
    for f in dataclasses.fields(action):
        record[f.name] = _encode(getattr(action, f.name))
    if isinstance(action, RequestArrives):
        record["request_id"] = request_id
    record["responses"] = [dataclasses.asdict(r) for r in responses]
    return record


_DECODERS: dict[str, typing.Callable[[Any], object]] = {
    "ExecutorName": ExecutorName,
}


#: Per kind: the action class and, per field, its decoder (None: the record's value as it is).
_ACTION_DECODING: dict[str, tuple[type, tuple[tuple[str, typing.Callable[[Any], object] | None], ...]]] = {
    name: (kind, tuple((f, _DECODERS.get(annotation)) for f, annotation in _action_fields(kind))) for name, kind in KINDS.items()
}


#: Actions decoded so far, by kind and field values. A trace repeats few distinct actions
#: (``ClockAdvances(1)``, ``WorkerTakesTask(send, 0)``, …) and an action is an immutable value,
#: so the replay decodes each once; validation has checked each field's type, so equal values
#: mean equal actions. Cleared when it reaches :data:`_DECODED_LIMIT` entries.
_DECODED: dict[tuple[Any, ...], Action] = {}
_DECODED_LIMIT = 1 << 16


def record_text(record: Mapping[str, Any]) -> str:
    """An event's record as compact JSON, written the same however it was read: fields in the
    format's column order (any other after them, by name), a nested object's by name, null fields
    and an empty ``responses`` left out (a trace may spell "nothing" either way)."""

    def present(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: present(value[k]) for k in sorted(value) if value[k] is not None}
        if isinstance(value, list):
            return [present(v) for v in value]
        return value

    order = {name: i for i, name in enumerate(COLUMNS)}
    keys = sorted((k for k, v in record.items() if v is not None and v != []), key=lambda k: (order.get(k, len(order)), k))
    return json.dumps({k: present(record[k]) for k in keys}, separators=(",", ":"), ensure_ascii=False)


def action_from_record(record: Mapping[str, Any]) -> Action:
    """The spec action an event record names (the record is validated: fields present, types right)."""
    kind = record["kind"]
    return _action(kind, tuple([record[name] for name, _ in _ACTION_DECODING[kind][1]]))


def _action(kind: str, values: tuple[Any, ...]) -> Action:
    """The action of kind ``kind`` whose fields (in ``_ACTION_DECODING``'s order) hold ``values``."""
    key = (kind, *values)
    action = _DECODED.get(key)
    if action is None:
        if len(_DECODED) >= _DECODED_LIMIT:
            _DECODED.clear()
        cls, decoding = _ACTION_DECODING[kind]
        args = {name: value if decode is None else decode(value) for (name, decode), value in zip(decoding, values)}
        action = _DECODED[key] = cls(**args)
    return action


class EventColumns:
    """The events of an Arrow table (event columns in ``ARROW_SCHEMA``'s types, or string columns
    dictionary-encoded; no header rows) as lists of Python values, one entry per row: what the
    replay reads, without building a record for every row. Each row's action is decoded on first
    use (each distinct one once); :meth:`record` gives a row as a record, for a divergence's text
    and for the partial replay, which reads records and never the actions.

    A dictionary-encoded column decodes each distinct string once, and the rows share it.
    """

    def __init__(self, table: pa.Table) -> None:
        columns = {name: _python_values(table.column(name)) for name in table.column_names if name != "responses"}
        self._columns = columns
        self.trace_ids: list[str] = columns["trace_id"]
        self.seqs: list[int] = columns["seq"]
        self.times: list[int] = columns["ts"]
        self.kinds: list[str] = columns["kind"]
        self.opaques: list[int | None] = columns["request_id"]
        #: Each row's non-empty ``responses``, by row number.
        self.responses = _responses_by_row(table.column("responses"))
        self._actions: list[Action | None] | None = None

    @property
    def actions(self) -> list[Action | None]:
        """Each row's action; None for a black-box Response, which names none."""
        if self._actions is None:
            columns = self._columns
            fields = {kind: [columns[name] for name, _ in decoding] for kind, (_, decoding) in _ACTION_DECODING.items()}
            self._actions = [
                None if kind == RESPONSE_KIND else _action(kind, tuple([values[i] for values in fields[kind]]))
                for i, kind in enumerate(self.kinds)
            ]
        return self._actions

    def record(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a record holding only the fields its kind carries, and ``responses`` only
        when it holds one: what ``Table.to_pylist`` gives with nulls and empty ``responses`` left out."""
        kind = self.kinds[i]
        record: dict[str, Any] = {"trace_id": self.trace_ids[i], "seq": self.seqs[i], "ts": self.times[i], "kind": kind}
        for name in KIND_FIELDS[kind]:
            record[name] = self._columns[name][i]
        if i in self.responses:
            # Field by field: ``dataclasses.asdict`` deep-copies each field and was half the cost
            # of reading a trace for the partial replay, which takes every row as a record.
            record["responses"] = [{"request_id": r.request_id, "code": r.code, "remark": r.remark} for r in self.responses[i]]
        return record


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    """The column as Python values; a dictionary-encoded column's rows share its strings."""
    if not pa.types.is_dictionary(column.type):
        plain: list[Any] = column.to_pylist()
        return plain
    index, words = vocabulary(column)
    values: list[Any] = np.array(words, dtype=object)[index].tolist()
    return values


def vocabulary(column: pa.ChunkedArray | pa.Array) -> tuple[npt.NDArray[np.int64], list[str | None]]:
    """Strings as indices into the returned distinct values, whose last entry is None (null)."""
    encoded = pc.dictionary_encode(column)  # a dictionary-encoded column as it is
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks() if encoded.num_chunks else pa.array([], pa.dictionary(pa.int32(), pa.string()))
    values: list[str | None] = [*encoded.dictionary.to_pylist(), None]
    return np.asarray(pc.fill_null(encoded.indices, len(values) - 1).to_numpy(), dtype=np.int64), values


def _responses_by_row(column: pa.ChunkedArray) -> dict[int, tuple[RecordedResponse, ...]]:
    """Each row's non-empty ``responses``, by row number: the lists' items are converted field by
    field, not as a list of structs per row."""
    lengths = np.asarray(pc.fill_null(pc.list_value_length(column), 0))
    items = pc.list_flatten(column)
    ids, codes, remarks = (pc.struct_field(items, name).to_pylist() for name in ("request_id", "code", "remark"))
    starts = np.cumsum(lengths) - lengths
    answered = np.flatnonzero(lengths)
    return {
        row: tuple([RecordedResponse(ids[j], codes[j], remarks[j]) for j in range(start, start + n)])
        for row, start, n in zip(answered.tolist(), starts[answered].tolist(), lengths[answered].tolist())
    }


def responses_from_record(record: Mapping[str, Any]) -> tuple[RecordedResponse, ...]:
    """The responses an event carries (none if the column is null)."""
    responses = record.get("responses")
    if not responses:
        return ()  # most events: the searches read every event's responses several times
    return tuple([RecordedResponse(r["request_id"], r["code"], r["remark"]) for r in responses])


# -- JSON Schema -----------------------------------------------------------------------------------

_JSON_TYPES = {"int": "integer", "bool": "boolean", "str": "string", "ExecutorName": "string"}

#: A request code is any Java int (RemotingCommand.code); the spec names some of them.
JAVA_INT_MIN, JAVA_INT_MAX = -(2**31), 2**31 - 1


def _field_json_schema(annotation: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": _JSON_TYPES[annotation]}
    if annotation == "ExecutorName":
        schema["enum"] = [n.value for n in ExecutorName]
    return schema


def _code_json_schema() -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": JAVA_INT_MIN,
        "maximum": JAVA_INT_MAX,
        "description": "the wire request code, any Java int; routed by the profile's processor table",
    }


def _environment_json_schema() -> dict[str, Any]:
    executor = _field_json_schema("ExecutorName")
    flag: dict[str, Any] = {"type": "boolean"}
    return {
        "type": ["object", "null"],
        "description": "the hidden environment steps the trace allows (a field left out: none of its kind); null or absent: only an exception inside the put lock; see docs/trace-format.md",
        "properties": {
            "exceptions_in_lock": flag,
            "ha_appends": flag,
            "foreign_tasks": {"type": "array", "items": executor, "uniqueItems": True},
            "max_foreign_tasks": {"type": "integer", "minimum": 0},
            "limiter_overflows": flag,
            "fast_failure_toggles": {"type": "array", "items": flag, "uniqueItems": True},
            "queue_wait_changes": {
                "type": "array",
                "uniqueItems": True,
                "items": {
                    "type": "object",
                    "required": ["queue", "wait_ms"],
                    "properties": {"queue": executor, "wait_ms": {"type": "integer", "minimum": 0}},
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    }


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one JSON Lines record (header or event), generated from the spec's actions."""
    response = {
        "type": "object",
        "required": ["request_id", "code", "remark"],
        "properties": {
            "request_id": {"type": "integer", "description": "the opaque of the request answered"},
            "code": {"type": "integer"},
            "remark": {"type": ["string", "null"]},
        },
        "additionalProperties": False,
    }

    def common(seq: dict[str, Any]) -> dict[str, Any]:
        """The fields every record carries, with its variant's ``seq`` (0 for the header, from 1 for an event)."""
        return {
            "trace_id": {"type": "string", "minLength": 1},
            "seq": seq,
            "ts": {"type": "integer", "description": "broker clock (SystemClock.now()) in ms"},
        }

    null = {"type": "null"}
    header_props = {
        **common({"const": 0}),
        "kind": {"const": HEADER_KIND},
        "format_version": {"const": FORMAT_VERSION},
        "implementation": {"type": "string"},
        "implementation_version": {"type": "string"},
        "profile": {"type": "string", "description": "a release, 4.0.0 to 5.3.3 (spec.releases.RELEASES)"},
        "observation": {"enum": [o.value for o in Observation]},
        "config": {"type": "object", "description": "every spec.config.BrokerConfig field; see docs/trace-format.md"},
        "recording_incomplete": {
            "type": "null",
            "description": "why the recorder missed steps of the run; a trace that has a reason is refused",
        },
        "environment": _environment_json_schema(),
    }
    # A record may carry another kind's columns only as null (a Parquet row holds every column).
    variants: list[dict[str, Any]] = [
        {
            "title": HEADER_KIND,
            "type": "object",
            "required": ["trace_id", "seq", "ts", "kind", *(c for c in HEADER_COLUMNS if c not in OPTIONAL_HEADER_COLUMNS)],
            "properties": {**{c: null for c in EVENT_FIELD_COLUMNS}, "responses": null, **header_props},
            "additionalProperties": False,
        }
    ]
    for name in [*KINDS, RESPONSE_KIND]:
        props: dict[str, Any] = {
            **{c: null for c in (*EVENT_FIELD_COLUMNS, *HEADER_COLUMNS)},
            **common({"type": "integer", "minimum": 1}),
            "kind": {"const": name},
        }
        annotations = dict(_action_fields(KINDS[name])) if name in KINDS else {}
        for field in KIND_FIELDS[name]:
            props[field] = _code_json_schema() if field == "code" else _field_json_schema(annotations.get(field, "int"))
        # A response list may be absent or null where the event wrote nothing.
        props["responses"] = {"type": ["array", "null"], "items": response}
        required = ["trace_id", "seq", "ts", "kind", *KIND_FIELDS[name]]
        if name == "RequestArrives":
            # Which IO thread decoded a request is internal: a black-box trace may leave it out.
            props["io_thread"] = {"type": ["integer", "null"], "description": "required unless the trace is black-box"}
            required = [f for f in required if f not in BLACK_BOX_OPTIONAL]
        if name == RESPONSE_KIND:
            props["responses"] = {"type": "array", "items": response, "minItems": 1, "maxItems": 1}
            required.append("responses")
        doc = (KINDS[name].__doc__ or "").splitlines()[0] if name in KINDS else "A response seen on the wire (black-box)."
        variants.append(
            {"title": name, "description": doc, "type": "object", "required": required, "properties": props, "additionalProperties": False}
        )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/rocketmq-flowspec/traces/trace-event.schema.json",
        "title": f"rocketmq-flowspec trace record, format {FORMAT_VERSION}",
        "oneOf": variants,
    }
