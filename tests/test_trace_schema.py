"""The JSON Schema and the reader agree: both are generated from traces/format/records.py, every
example passes both, and every record the reader refuses for its shape the schema refuses too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from traces.format.read import TraceInputError, validate
from traces.recording.examples import EXAMPLES
from traces.recording.record import record_workload

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "traces" / "format" / "trace-event.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
Record = dict[str, Any]


def _schema_accepts(record: Record) -> bool:
    return bool(VALIDATOR.is_valid(record))


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_example_record_passes_the_schema() -> None:
    records = [json.loads(line) for path in sorted(EXAMPLES.glob("*.jsonl")) for line in path.read_text().splitlines() if line]
    assert records
    refused = [r for r in records if not _schema_accepts(r)]
    assert not refused, refused[:3]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    path = tmp_path_factory.mktemp("good") / "steady.jsonl"
    record_workload(path, "steady", "5.3.3", 40)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _first(records: list[Record], kind: str) -> int:
    return next(i for i, r in enumerate(records) if r["kind"] == kind)


SHAPES: list[tuple[str, str, Callable[[Record], None]]] = [
    ("unknown kind", "RequestArrives", lambda r: r.update(kind="WorkerDances")),
    ("missing code", "RequestArrives", lambda r: r.pop("code")),
    ("io_thread a string", "RequestArrives", lambda r: r.update(io_thread="0")),
    ("oneway an int", "RequestArrives", lambda r: r.update(oneway=1)),
    ("code past Java's int", "RequestArrives", lambda r: r.update(code=2**31)),
    ("unknown field", "RequestArrives", lambda r: r.update(colour="red")),
    ("another kind's field", "RequestArrives", lambda r: r.update(executor="send")),
    ("a header field on an event", "RequestArrives", lambda r: r.update(profile="5.3.3")),
    ("dispatch without io_thread", "DispatchCreatesTask", lambda r: r.pop("io_thread")),
    ("response code a string", "DispatchCreatesTask", lambda r: r.update(responses=[{"request_id": 1, "code": "0", "remark": None}])),
    ("header of another format", "TraceHeader", lambda r: r.update(format_version="2")),
    ("environment a list", "TraceHeader", lambda r: r.update(environment=[])),
    ("environment with an unknown field", "TraceHeader", lambda r: r["environment"].update(storms=True)),
    ("ha_appends an int", "TraceHeader", lambda r: r["environment"].update(ha_appends=1)),
    ("foreign task on an unknown executor", "TraceHeader", lambda r: r["environment"].update(foreign_tasks=["bogus"], max_foreign_tasks=1)),
    ("negative max_foreign_tasks", "TraceHeader", lambda r: r["environment"].update(max_foreign_tasks=-1)),
    ("a toggle named twice", "TraceHeader", lambda r: r["environment"].update(fast_failure_toggles=[True, True])),
    ("queue wait change without its wait", "TraceHeader", lambda r: r["environment"].update(queue_wait_changes=[{"queue": "send"}])),
    ("negative queue wait", "TraceHeader", lambda r: r["environment"].update(queue_wait_changes=[{"queue": "send", "wait_ms": -1}])),
]


@pytest.mark.parametrize(("what", "kind", "change"), SHAPES, ids=[s[0] for s in SHAPES])
def test_a_record_of_the_wrong_shape_is_refused_by_both(
    good: list[Record], tmp_path: Path, what: str, kind: str, change: Callable[[Record], None]
) -> None:
    records = [json.loads(json.dumps(r)) for r in good]
    index = _first(records, kind)
    assert _schema_accepts(records[index]), f"{what}: the unchanged record must pass"
    change(records[index])
    assert not _schema_accepts(records[index]), f"{what}: the schema lets it through"
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(TraceInputError):
        validate([str(path)])


def test_a_header_may_leave_its_environment_out_or_declare_every_kind_in_both(good: list[Record], tmp_path: Path) -> None:
    faults = tmp_path / "faults.jsonl"
    record_workload(faults, "faults", "5.3.3", 10)
    declared = {**json.loads(faults.read_text().splitlines()[0]), "trace_id": good[0]["trace_id"]}
    assert all(declared["environment"][k] for k in declared["environment"])  # every kind declared
    bare = {k: v for k, v in good[0].items() if k != "environment"}
    assert _schema_accepts(declared) and _schema_accepts(bare)
    for header in (declared, bare):
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in [header, *good[1:]]))
        assert validate([str(path)]).events == len(good) - 1


def test_a_black_box_arrival_may_leave_its_io_thread_out_in_both(good: list[Record], tmp_path: Path) -> None:
    header = {**good[0], "observation": "black-box"}
    arrival = {k: v for k, v in good[_first(good, "RequestArrives")].items() if k != "io_thread"}
    arrival["seq"] = 1
    assert _schema_accepts(header) and _schema_accepts(arrival)
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(arrival) + "\n")
    assert validate([str(path)]).events == 1
