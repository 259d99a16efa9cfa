"""The record helpers of traces/format/records.py on the inputs the examples never give them: an event's
text (what reports and divergences print) is the same however the trace spelled it; headers, event records
and column conversions read back what was written; the decoded-action cache stays within its limit.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import traces.format.records as records
from spec.environment import ClockAdvances
from spec.profiles import ExecutorName
from spec.releases import RELEASES
from spec.workers import WorkerTakesTask
from traces.format.records import (
    ARROW_SCHEMA,
    EVENT_COLUMNS,
    QUIET_ENVIRONMENT,
    RESPONSE_KIND,
    UNDECLARED_ENVIRONMENT,
    ConfigError,
    EventColumns,
    RecordedResponse,
    config_from_json,
    config_to_json,
    environment_from_json,
    environment_to_json,
    event_record,
    header_from_record,
    header_record,
    record_text,
    vocabulary,
)
from traces.recording.examples import EXAMPLES


def test_record_text_orders_fields_as_the_format_then_others_by_name() -> None:
    record = {"zeta": 1, "topic": "t", "kind": "RequestArrives", "alpha": 2, "seq": 3, "code": 10, "trace_id": "a", "ts": 7}
    assert record_text(record) == '{"trace_id":"a","seq":3,"ts":7,"kind":"RequestArrives","code":10,"topic":"t","alpha":2,"zeta":1}'


def test_record_text_is_the_same_for_a_null_field_or_an_empty_list_and_for_one_left_out() -> None:
    spelled = {"trace_id": "a", "seq": 1, "ts": None, "kind": "Response", "topic": None, "responses": []}
    assert record_text(spelled) == record_text({"kind": "Response", "seq": 1, "trace_id": "a"}) == '{"trace_id":"a","seq":1,"kind":"Response"}'


def test_record_text_writes_a_nested_object_by_name_without_its_nulls_and_keeps_text_unescaped() -> None:
    record = {
        "trace_id": "é",
        "seq": 2,
        "kind": "Response",
        "responses": [{"request_id": 5, "code": 2, "remark": None}, {"remark": "[OVERLOAD]système", "code": 2, "request_id": 6}],
        "config": {"b": [1, {"y": None, "x": 0}], "a": None},
    }
    assert record_text(record) == (
        '{"trace_id":"é","seq":2,"kind":"Response","responses":[{"code":2,"request_id":5},'
        '{"code":2,"remark":"[OVERLOAD]système","request_id":6}],"config":{"b":[1,{"x":0}]}}'
    )


def test_a_header_declares_an_environment_only_when_it_has_one_and_reads_back_the_same() -> None:
    first = json.loads((EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()[0])
    header = replace(header_from_record(first), environment=None)
    assert "environment" not in header_record(header) and header_from_record(header_record(header)) == header
    declared = replace(header, environment=QUIET_ENVIRONMENT)
    assert header_record(declared)["environment"]["ha_appends"] is False
    assert header_from_record(header_record(declared)) == declared


def test_an_event_record_carries_its_responses_as_objects_and_an_empty_list_for_none() -> None:
    action = ClockAdvances(1)
    assert event_record("t", 1, 5, action, [])["responses"] == []
    answered = event_record("t", 1, 5, action, [RecordedResponse(7, 2, "[OVERLOAD]system busy"), RecordedResponse(8, 0, None)])
    assert answered["responses"] == [{"request_id": 7, "code": 2, "remark": "[OVERLOAD]system busy"}, {"request_id": 8, "code": 0, "remark": None}]


def test_vocabulary_gives_each_row_its_string_and_null_the_last_entry_over_chunks() -> None:
    for column in (pa.chunked_array([["a", None], ["b", "a", None]]), pa.array(["a", None, "b", "a", None])):
        index, values = vocabulary(column)
        assert values[-1] is None and [values[i] for i in index.tolist()] == ["a", None, "b", "a", None]
    # A table filtered to none of its rows has columns of zero chunks (a piece that holds no wanted trace).
    index, values = vocabulary(pa.table({"s": ["a"]}).filter(pa.array([False])).column("s"))
    assert (index.tolist(), values) == ([], [None])


def test_event_columns_read_null_strings_and_null_responses_of_dictionary_encoded_rows() -> None:
    rows = [
        {"trace_id": "t", "seq": 1, "ts": 0, "kind": "WorkerTakesTask", "executor": "send", "worker": 0, "responses": None},
        {"trace_id": "t", "seq": 2, "ts": 0, "kind": RESPONSE_KIND, "responses": [{"request_id": 4, "code": 2, "remark": None}]},
        {"trace_id": "t", "seq": 3, "ts": 1, "kind": "WorkerTakesTask", "executor": "admin", "worker": 1, "responses": []},
    ]
    table = pa.Table.from_pylist([{c: r.get(c) for c in EVENT_COLUMNS} for r in rows], schema=pa.schema([ARROW_SCHEMA.field(c) for c in EVENT_COLUMNS]))
    table = table.set_column(table.schema.get_field_index("executor"), "executor", pc.dictionary_encode(table.column("executor")))
    columns = EventColumns(table)
    assert columns.responses == {1: (RecordedResponse(4, 2, None),)}
    assert [columns.record(i) for i in (0, 2)] == [
        {"trace_id": "t", "seq": 1, "ts": 0, "kind": "WorkerTakesTask", "executor": "send", "worker": 0},
        {"trace_id": "t", "seq": 3, "ts": 1, "kind": "WorkerTakesTask", "executor": "admin", "worker": 1},
    ]
    assert columns.actions[1] is None and columns.opaques == [None, None, None]
    empty = EventColumns(table.filter(pa.array([False] * 3)))
    assert (empty.kinds, empty.actions, empty.responses) == ([], [], {})


def test_an_action_is_decoded_once_and_the_cache_is_cleared_at_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """action_from_record keeps each distinct action it decoded (a trace repeats few), at most
    _DECODED_LIMIT of them. The cache is emptied here: a process that has decoded these before
    (mutmut forks every mutant from one) would otherwise never decode them again."""
    monkeypatch.setattr(records, "_DECODED", {})
    monkeypatch.setattr(records, "_DECODED_LIMIT", 2)
    take = {"kind": "WorkerTakesTask", "executor": "send", "worker": 0}
    first = records.action_from_record(take)
    assert first == WorkerTakesTask(ExecutorName.SEND, 0) and records.action_from_record(dict(take)) is first
    assert records.action_from_record({"kind": "ClockAdvances", "ms": 3}) == ClockAdvances(3)
    assert len(records._DECODED) == 2
    assert records.action_from_record({"kind": "WorkerTakesTask", "executor": "admin", "worker": 1}) == WorkerTakesTask(ExecutorName.ADMIN, 1)
    assert len(records._DECODED) == 1  # full at the limit: emptied before the new one went in


def test_a_config_field_of_the_wrong_type_is_named_with_every_type_it_may_have() -> None:
    first = json.loads((EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()[0])
    first["config"]["executors"][0]["capacity"] = "big"
    with pytest.raises(ConfigError) as refused:
        config_from_json(first["profile"], first["config"])
    assert str(refused.value) == "config.executors[0].capacity must be int or null, got 'big'"


def test_a_header_allows_what_it_declares_alone_or_only_an_exception_inside_the_lock() -> None:
    header = replace(header_from_record(json.loads((EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()[0])), environment=None)
    assert header.hidden_environment() == UNDECLARED_ENVIRONMENT and UNDECLARED_ENVIRONMENT.exceptions_in_lock
    walked = replace(QUIET_ENVIRONMENT, ha_appends=True, clock_steps=(1, 5), max_elapsed_ms=90, punctual_fast_failure=True)
    assert replace(header, environment=walked).hidden_environment() == replace(QUIET_ENVIRONMENT, ha_appends=True)


def test_a_bad_environment_is_refused_naming_the_field_at_fault() -> None:
    config = header_from_record(json.loads((EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()[0])).config
    for declared, message in (
        ({"colour": 1}, "environment: unknown field(s) ['colour']; known: "),
        ({"ha_appends": 1}, "environment.ha_appends must be bool, got 1"),
        ({"fast_failure_toggles": [True, "x"]}, "environment.fast_failure_toggles[1] must be bool, got 'x'"),
        ({"max_foreign_tasks": 2}, "environment.max_foreign_tasks must be at least 1 exactly when foreign_tasks names an executor, got 2"),
        ({"queue_wait_changes": 3}, "environment.queue_wait_changes must be list, got 3"),
        ({"max_foreign_tasks": "2"}, "environment.max_foreign_tasks must be int, got '2'"),
        ({"foreign_tasks": ["bogus"], "max_foreign_tasks": 1}, "environment.foreign_tasks[0]: unknown executor 'bogus'; known: "),
        ({"foreign_tasks": ["pull"], "max_foreign_tasks": 1}, "environment.foreign_tasks[0]: the broker has no 'pull' executor; it has ['send', 'admin']"),
    ):
        with pytest.raises(ConfigError) as refused:
            environment_from_json(config, declared)
        assert str(refused.value).startswith(message), (declared, str(refused.value))


def test_a_field_the_environment_leaves_out_declares_none_of_its_kind() -> None:
    config = header_from_record(json.loads((EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()[0])).config
    assert environment_from_json(config, {}) == QUIET_ENVIRONMENT
    assert environment_from_json(config, {"ha_appends": True, "fast_failure_toggles": [False]}) == replace(
        QUIET_ENVIRONMENT, ha_appends=True, fast_failure_toggles=(False,))


def _example_header() -> dict[str, Any]:
    record: dict[str, Any] = json.loads((EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()[0])
    return record


def test_a_header_with_every_field_away_from_the_examples_reads_back_as_written() -> None:
    """Every field of a header's config and environment is parsed into its place: none is left at
    a value the examples share, so a field read as nothing, or from another key, shows."""
    record = _example_header()
    record.update(implementation="another-broker", implementation_version="9.9.9")
    config = record["config"]
    config.update(
        processors=7, io_threads=3, os_page_cache_busy_timeout_ms=33, fast_failure_enable=False, transient_store_pool_enable=True,
        transient_store_pool_size=3, mapped_file_size=9, flush_disk_type="SYNC_FLUSH", default_processor_registered=False,
        start_time_ms=5, fast_failure_initial_delay_ms=12, fast_failure_period_ms=11,
    )
    config["executors"] = [{"name": "send", "threads": 3, "capacity": 7}, {"name": "admin", "threads": 2, "capacity": None}]
    config["queue_waits"] = {"send": 61, "admin": 499}
    config["rate_limit"] = {"enabled": True, "default_qps": 1500.5, "send_msg_back_qps": 7.0, "circuit_breaker_open_micros": 250}
    record["environment"] = {
        "exceptions_in_lock": True, "ha_appends": True, "foreign_tasks": ["admin", "send"], "max_foreign_tasks": 3, "limiter_overflows": True,
        "fast_failure_toggles": [False, True], "queue_wait_changes": [{"queue": "send", "wait_ms": 7}, {"queue": "admin", "wait_ms": 0}],
    }
    header = header_from_record(record)
    assert config_to_json(header.config) == config
    assert header.environment is not None and environment_to_json(header.environment) == record["environment"]
    assert (header.implementation, header.implementation_version) == ("another-broker", "9.9.9")


#: ExecutorName's values, as a message lists the names it knows.
_KNOWN_EXECUTORS = "['send', 'pull', 'litePull', 'heartbeat', 'endTransaction', 'ack', 'query', 'clientManage', 'consumerManage', 'reply', 'loadBalance', 'admin']"


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"fast_failure_toggles": [True, True]}, "environment.fast_failure_toggles names a value twice: [true, true]"),
        ({"foreign_tasks": ["send", "admin", "send"], "max_foreign_tasks": 1}, 'environment.foreign_tasks names a value twice: ["send", "admin", "send"]'),
        # Cut at 80 characters, as read.py cuts a value it quotes.
        ({"queue_wait_changes": [{"queue": "send", "wait_ms": 7}, {"queue": "admin", "wait_ms": 0}, {"queue": "send", "wait_ms": 7}]},
         'environment.queue_wait_changes names a value twice: [{"queue": "send", "wait_ms": 7}, {"queue": "admin", "wait_ms": 0}, {"queue": "s'),
        ({"max_foreign_tasks": 1}, "environment.max_foreign_tasks must be at least 1 exactly when foreign_tasks names an executor, got 1 with foreign_tasks []"),
        ({"queue_wait_changes": [{"queue": "send"}]}, "environment.queue_wait_changes[0] must be an object with exactly 'queue' and 'wait_ms', got {\"queue\": \"send\"}"),
        ({"queue_wait_changes": [{"queue": "send", "wait_ms": 1, "note": "written by hand, with more to say than the format has room for"}]},
         "environment.queue_wait_changes[0] must be an object with exactly 'queue' and 'wait_ms', got "
         '{"queue": "send", "wait_ms": 1, "note": "written by hand, with more to say than '),
        ({"queue_wait_changes": [{"queue": "send", "wait_ms": -1}]}, "environment.queue_wait_changes[0].wait_ms must be at least 0, got -1"),
        ({"queue_wait_changes": [{"queue": "send", "wait_ms": "1"}]}, "environment.queue_wait_changes[0].wait_ms must be int, got '1'"),
        ({"queue_wait_changes": [{"queue": 3, "wait_ms": 1}]}, "environment.queue_wait_changes[0].queue must be str, got 3"),
        ({"queue_wait_changes": [{"queue": "bogus", "wait_ms": 1}]}, f"environment.queue_wait_changes[0].queue: unknown executor 'bogus'; known: {_KNOWN_EXECUTORS}"),
        # The example's broker cleans only the queues its config gives a wait: send and admin.
        ({"queue_wait_changes": [{"queue": "pull", "wait_ms": 1}]},
         "environment.queue_wait_changes[0].queue: fast failure does not clean queue 'pull' here; it cleans ['send', 'admin']"),
    ],
)
def test_each_problem_of_an_environment_is_named_whole(declared: dict[str, Any], message: str) -> None:
    """The whole message of each way an environment is refused: where, and what."""
    with pytest.raises(ConfigError) as refused:
        environment_from_json(header_from_record(_example_header()).config, declared)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"flush_disk_type": "SOMETIMES"}, "config.flush_disk_type must be one of ['ASYNC_FLUSH', 'SYNC_FLUSH'], got 'SOMETIMES'"),
        ({"flush_disk_type": 3}, "config.flush_disk_type must be str, got 3"),
        ({"executors": [7]}, "config.executors[0] must be an object"),
        ({"executors": [{"name": "bogus", "threads": 1, "capacity": 1}]}, f"config.executors[0].name: unknown executor 'bogus'; known: {_KNOWN_EXECUTORS}"),
        ({"queue_waits": {"send": 50, "admin": "x"}}, "config.queue_waits.admin must be int, got 'x'"),
        ({"queue_waits": {"send": 50, "bogus": 1}}, f"config.queue_waits: unknown executor 'bogus'; known: {_KNOWN_EXECUTORS}"),
        # 5.3.3's fast failure cleans send, pull, litePull, heartbeat, endTransaction, ack and admin.
        ({"queue_waits": {"send": 50, "query": 5, "reply": 5}}, "config.queue_waits: profile 5.3.3 does not clean queue(s) ['query', 'reply']"),
        ({"processors": True}, "config.processors must be int, got True"),
        ({"rate_limit": {"enabled": False, "default_qps": 2000.0, "send_msg_back_qps": 100.0, "circuit_breaker_open_micros": 1.5}},
         "config.rate_limit.circuit_breaker_open_micros must be int, got 1.5"),
        ({"rate_limit": {"enabled": False, "default_qps": True, "send_msg_back_qps": 100.0, "circuit_breaker_open_micros": 1000000}},
         "config.rate_limit.default_qps must be int or float, got True"),
    ],
)
def test_each_problem_of_a_config_is_named_whole(change: dict[str, Any], message: str) -> None:
    """The whole message of each way a config is refused: where, and what."""
    with pytest.raises(ConfigError) as refused:
        config_from_json("5.3.3", {**_example_header()["config"], **change})
    assert str(refused.value) == message


@pytest.mark.parametrize(
    "place",
    [
        "processors", "io_threads", "executors", "executors[0].name", "executors[0].threads", "executors[0].capacity", "queue_waits",
        "os_page_cache_busy_timeout_ms", "fast_failure_enable", "transient_store_pool_enable", "transient_store_pool_size",
        "mapped_file_size", "flush_disk_type", "default_processor_registered", "rate_limit", "rate_limit.enabled",
        "rate_limit.default_qps", "rate_limit.send_msg_back_qps", "rate_limit.circuit_breaker_open_micros", "start_time_ms",
        "fast_failure_initial_delay_ms", "fast_failure_period_ms",
    ],
)
def test_a_config_field_left_out_is_named_by_its_place(place: str) -> None:
    """Each field a config must have, left out, is named by where it belongs (a `place` as
    ``executors[0].name`` leaves out the first executor's name)."""
    config = _example_header()["config"]
    *path, last = [int(key) if key.isdigit() else key for key in re.findall(r"\w+", place)]
    holder = config
    for key in path:
        holder = holder[key]
    del holder[last]
    with pytest.raises(ConfigError) as refused:
        config_from_json("5.3.3", config)
    assert str(refused.value) == f"config.{place} is missing"


def test_a_header_of_a_release_no_profile_describes_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError) as refused:
        config_from_json("9.9.9", _example_header()["config"])
    assert str(refused.value) == f"profile: unknown RocketMQ release '9.9.9'; known releases: {', '.join(RELEASES)}"
