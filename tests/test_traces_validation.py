"""Validation in Spark's tasks (traces.checking.validation) says what validation in the driver
(traces.format.read.validate) says: the same traces, headers, events and kinds for valid input,
and the same problems, by file and line or row and field, for invalid input; the driver itself
reads no record."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import traces.format.read as read
from traces.checking import layout
from traces.checking.layout import Layout, plan
from traces.checking.validation import validate_on_spark
from traces.format.read import TraceInputError, Validator, read_records, validate
from traces.format.write import TraceWriter
from traces.recording.record import record_workload

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Record = dict[str, Any]
#: What validation concluded: the traces' summaries, events and kinds; or the problems, as text and as data.
Outcome = tuple[object, ...]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    """Three short traces, one after another."""
    path = tmp_path_factory.mktemp("recorded") / "steady.jsonl"
    record_workload(path, "steady", "5.3.3", 40, traces=3)
    return [r.data for r in read_records([str(path)])]


def _outcome(run: Callable[[], Validator]) -> Outcome:
    try:
        v = run()
    except TraceInputError as e:
        return ("invalid", e.problems, e.located)
    return ("valid", v.summaries(), v.events, dict(v.kinds))


def _both(spark: SparkSession, paths: list[str]) -> tuple[Outcome, Outcome]:
    """Validation in the driver, and in Spark's tasks."""
    return _outcome(lambda: validate(paths)), _outcome(lambda: validate_on_spark(spark, plan(paths)))


@pytest.fixture(params=["units", "runs"])
def cut(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Validation tasks of whole units, or of runs cut from them: units of 100 rows at most, so
    that a run shares a row group with the runs beside it."""
    if request.param == "runs":
        monkeypatch.setattr(layout, "MIN_TASK_ROWS", 1)
        monkeypatch.setattr(layout, "MAX_UNIT_ROWS", 100)
    return str(request.param)


def _parquet(records: list[Record], out: Path) -> list[str]:
    """A dataset of small row groups and files, so that traces cross both."""
    with TraceWriter(out, row_group=40, file_rows=120) as writer:
        writer.write_all(records)
    assert len(list(out.glob("*.parquet"))) > 2
    return [str(out)]


def _jsonl(records: list[Record], out: Path) -> list[str]:
    """Two files, the second beginning in the middle of the second trace."""
    out.mkdir()
    cut = next(i for i, r in enumerate(records) if r["trace_id"].endswith("-1") and r["seq"] == 20)
    for name, part in (("a.jsonl", records[:cut]), ("b.jsonl", records[cut:])):
        (out / name).write_text("".join(json.dumps(r) + "\n" for r in part))
    return [str(out)]


def _at(records: list[Record], trace: int, seq: int) -> int:
    return next(i for i, r in enumerate(records) if r["trace_id"].endswith(f"-{trace}") and r["seq"] == seq)


def _change(trace: int, at: int, **values: object) -> Callable[[list[Record]], None]:
    """Set ``values`` in the event of ``trace`` with seq ``at``."""

    def change(records: list[Record]) -> None:
        i = _at(records, trace, at)
        records[i] = {**records[i], **values}

    return change


def _unchanged(records: list[Record]) -> None:
    pass


def _second_header(records: list[Record]) -> None:
    records.insert(_at(records, 2, 30), records[_at(records, 1, 0)])


def _header_after_an_event(records: list[Record]) -> None:
    i = _at(records, 1, 0)
    records[i], records[i + 1] = records[i + 1], records[i]


def _opaque_again(records: list[Record]) -> None:
    """Trace 2's last request takes the opaque of its first (in another row group, and file)."""
    arrivals = [i for i, r in enumerate(records) if r["trace_id"].endswith("-2") and r["kind"] == "RequestArrives"]
    records[arrivals[-1]] = {**records[arrivals[-1]], "request_id": records[arrivals[0]]["request_id"]}


def _no_trace_id(records: list[Record]) -> None:
    records[_at(records, 1, 25)].pop("trace_id")


CHANGES: list[tuple[str, Callable[[list[Record]], None]]] = [
    ("valid", _unchanged),
    ("a seq skipped in a later file", _change(2, 30, seq=31)),
    ("a seq repeated", _change(1, 22, seq=21)),
    ("an unknown kind", _change(0, 10, kind="WorkerDances")),
    ("an unknown executor", _change(2, 5, executor="bogus")),
    ("a second header", _second_header),
    ("an event before its header", _header_after_an_event),
    ("an opaque reused", _opaque_again),
]


@pytest.mark.spark
@pytest.mark.parametrize("form", [_parquet, _jsonl], ids=["parquet", "jsonl"])
@pytest.mark.parametrize(("what", "change"), CHANGES, ids=[w for w, _ in CHANGES])
def test_the_tasks_validate_as_the_driver_does(
    spark: SparkSession,
    records: list[Record],
    tmp_path: Path,
    cut: str,
    form: Callable[[list[Record], Path], list[str]],
    what: str,
    change: Callable[[list[Record]], None],
) -> None:
    changed = [dict(r) for r in records]
    change(changed)
    paths = form(changed, tmp_path / "in")
    driver, tasks = _both(spark, paths)
    assert driver[0] == ("valid" if what == "valid" else "invalid"), driver
    if cut == "units" or what == "valid":
        assert tasks == driver
    else:
        # The same first problem, and no other than the driver's: those it leaves out are the
        # driver's follow-on problems of traces in a run of their own (traces.checking.validation).
        assert tasks[0] == "invalid" and tasks[1][0] == driver[1][0]  # type: ignore[index]
        assert all(p in driver[1] for p in tasks[1]) and all(p in driver[2] for p in tasks[2])  # type: ignore[attr-defined]
    if cut == "runs" and form is _parquet:
        assert any(u.traces is not None for task in plan(paths).tasks(2) for u in task)


@pytest.mark.spark
def test_files_the_layout_cannot_read_are_validated_whole(spark: SparkSession, records: list[Record], tmp_path: Path) -> None:
    """A line that is not JSON, a record without a trace id, a truncated Parquet file, empty
    files: the driver's layout reads no trace id from them (or none at all), and the tasks still
    name each file's first problem as the driver's validation does, in input order."""
    paths = _parquet(records, tmp_path / "in")
    parts = sorted((tmp_path / "in").glob("*.parquet"))
    parts[1].write_bytes(parts[1].read_bytes()[:-100])
    (tmp_path / "in" / "empty.jsonl").write_text("")
    # Traces of their own: the driver's validator would draw follow-on problems from the rest of
    # a trace whose first file it gave up (traces.checking.validation says why the tasks do not).
    (tmp_path / "in" / "json.jsonl").write_text(json.dumps({**records[0], "trace_id": "json"}) + "\n{not json\n")
    without_id = [{**r, "trace_id": "no-id"} for r in records[:5]]
    without_id[3].pop("trace_id")
    (tmp_path / "in" / "no-id.jsonl").write_text("".join(json.dumps(r) + "\n" for r in without_id))
    driver, tasks = _both(spark, paths)
    assert tasks == driver
    text = str(driver[1])
    for expected in ("empty.jsonl: empty: no trace records", "json.jsonl:2: malformed JSON", "no-id.jsonl:4: field 'trace_id' is missing", f"{parts[1].name} row 0: not a readable Parquet file"):
        assert expected in text
    assert set(plan(paths).unread) == {str(parts[1]), str(tmp_path / "in" / "json.jsonl"), str(tmp_path / "in" / "empty.jsonl")}
    assert not plan([str(tmp_path / "in" / "no-id.jsonl")]).unread  # a line without a trace id is validation's to name


@pytest.mark.spark
def test_a_file_whose_trace_ids_cannot_be_read_is_refused_even_if_its_records_are_valid(spark: SparkSession, records: list[Record], tmp_path: Path) -> None:
    """Without its trace ids the layout cannot give the file's traces to the rules and the replay:
    it is never judged, and so never passes."""
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    unread = Layout((), {}, (), (str(path),), {str(path): "cannot tell"})
    with pytest.raises(TraceInputError) as refused:
        validate_on_spark(spark, unread)
    assert refused.value.located == ({"file": str(path), "message": "its trace ids cannot be read: cannot tell"},)


@pytest.mark.spark
def test_the_driver_reads_no_record(spark: SparkSession, records: list[Record], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks run in Spark's Python workers, which do not see this process's patches."""
    expected = _outcome(lambda: validate(_parquet(records, tmp_path / "in")))

    def refuse(*args: object) -> None:
        raise AssertionError("a record was read in the driver")

    monkeypatch.setattr(read, "check_part", refuse)
    monkeypatch.setattr(Validator, "check", refuse)
    monkeypatch.setattr(Validator, "accept_batch", refuse)
    assert _outcome(lambda: validate_on_spark(spark, plan([str(tmp_path / "in")]))) == expected
