"""Bad input: every kind of broken trace is refused with a message naming file, line and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from traces.format.records import ARROW_SCHEMA
from traces.format.read import MAX_LINE_BYTES, TraceInputError, validate
from traces.recording.record import record_workload
from traces.format.write import parquet_row

Record = dict[str, Any]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    path = tmp_path_factory.mktemp("good") / "steady.jsonl"
    record_workload(path, "steady", "5.3.3", 40)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[Record]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _refused(paths: list[str]) -> str:
    with pytest.raises(TraceInputError) as e:
        validate(paths)
    return str(e.value)


def test_a_good_trace_validates(good: list[Record], tmp_path: Path) -> None:
    v = validate([str(_write(tmp_path / "t.jsonl", good))])
    assert v.events == len(good) - 1 and len(v.traces) == 1


def test_empty_input(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    assert "empty.jsonl: empty: no trace records" in _refused([str(tmp_path / "empty.jsonl")])
    assert "no trace files" in _refused([str(tmp_path / "*.parquet")]) or "no such file" in _refused(
        [str(tmp_path / "*.parquet")]
    )


def test_malformed_json(good: list[Record], tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", good[:3])
    path.write_text(path.read_text() + '{"trace_id": "x", "seq": 3,\n')
    assert "t.jsonl:4: malformed JSON" in _refused([str(path)])


@pytest.mark.parametrize(
    ("index", "change", "message"),
    [
        (2, lambda r: r.update(kind="WorkerDances"), "t.jsonl:3: field 'kind': unknown kind 'WorkerDances'"),
        (-1, lambda r: r.pop("code"), "field 'code' is missing"),
        (-1, lambda r: r.update(io_thread="0"), "field 'io_thread' must be int"),
        (-1, lambda r: r.update(oneway=1), "field 'oneway' must be bool"),
        (-1, lambda r: r.update(code=2**31), "field 'code': 2147483648 is not a Java int (RemotingCommand.code)"),
        (0, lambda r: r.update(format_version="2"), "t.jsonl:1: field 'format_version': unknown format version '2'"),
        (0, lambda r: r["config"].pop("io_threads"), "t.jsonl:1: field config.io_threads is missing"),
        (0, lambda r: r["config"]["queue_waits"].update(pull=100), "must list, in this order, the queues release 5.3.3's BrokerFastFailure cleans among the executors: ['send', 'admin']"),
        (0, lambda r: r["config"]["executors"].append({"name": "send", "threads": 1, "capacity": 1}), "must name each at most once"),
        (3, lambda r: r.update(seq=2), "t.jsonl:4: field 'seq': trace"),
        (3, lambda r: r.update(seq=5), "skips seq 3..4"),
        (1, lambda r: r.update(responses=[{"request_id": 1, "code": "0", "remark": None}]), "responses[0]: field 'code' must be int"),
        (1, lambda r: r.update(colour="red"), "t.jsonl:2: unknown field(s) ['colour']"),
    ],
)
def test_a_bad_record_names_line_and_field(
    good: list[Record], tmp_path: Path, index: int, change: Callable[[Record], None], message: str
) -> None:
    # index -1 is the first RequestArrives (the events before it depend on the workload's walk).
    arrival = next(i for i, r in enumerate(good) if r["kind"] == "RequestArrives")
    records = [json.loads(json.dumps(r)) for r in good[: max(6, arrival + 1)]]
    change(records[arrival if index == -1 else index])
    assert message in _refused([str(_write(tmp_path / "t.jsonl", records))])


def test_duplicated_seq(good: list[Record], tmp_path: Path) -> None:
    records = good[:4] + [good[3]]
    assert "seq 3 after seq 3 repeats or goes back" in _refused([str(_write(tmp_path / "t.jsonl", records))])


def test_event_of_a_trace_with_no_header(good: list[Record], tmp_path: Path) -> None:
    assert "event before the trace's header" in _refused([str(_write(tmp_path / "t.jsonl", good[1:4]))])


def test_truncated_parquet(good: list[Record], tmp_path: Path) -> None:
    rows = [parquet_row(r) for r in good]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA), path)
    path.write_bytes(path.read_bytes()[:-100])
    assert "t.parquet row 0: not a readable Parquet file" in _refused([str(path)])


def test_a_line_of_10_mb(good: list[Record], tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", good[:2])
    with path.open("a") as f:
        f.write(json.dumps({**good[2], "topic": "x" * (10 << 20)}) + "\n")
    assert f"t.jsonl:3: line is longer than {MAX_LINE_BYTES} bytes" in _refused([str(path)])


def test_a_mixture_of_good_and_bad_files_names_only_the_bad(good: list[Record], tmp_path: Path) -> None:
    _write(tmp_path / "a-good.jsonl", good)
    _write(tmp_path / "b-bad.jsonl", [{**r, "trace_id": "t2"} for r in good[:2]] + [{**good[2], "trace_id": "t3"}])
    message = _refused([str(tmp_path)])
    assert "b-bad.jsonl:3" in message and "a-good.jsonl" not in message


@pytest.mark.parametrize("qps", ["Infinity", "-Infinity", "NaN", "1e-320", "0", "-5", "1e300"])
def test_a_limiter_rate_the_bucket_cannot_compute_with_is_refused_naming_the_field(good: list[Record], tmp_path: Path, qps: str) -> None:
    """A real broker's header may hold any number; one the token bucket's arithmetic cannot take
    (an infinite rate divides by a zero interval) is invalid input, never a crash of the check."""
    header = {**good[0], "config": {**good[0]["config"], "rate_limit": {**good[0]["config"]["rate_limit"], "default_qps": float(qps)}}}
    text = _refused([str(_write(tmp_path / "t.jsonl", [header, *good[1:]]))])
    assert "t.jsonl:1" in text and "rate_limit.default_qps" in text and "permits a second" in text


def test_the_limiter_rates_at_the_ends_of_the_range_are_accepted(good: list[Record], tmp_path: Path) -> None:
    for qps in (1e-3, 1e9):
        header = {**good[0], "config": {**good[0]["config"], "rate_limit": {**good[0]["config"]["rate_limit"], "default_qps": qps}}}
        validate([str(_write(tmp_path / f"t{qps}.jsonl", [header, *good[1:]]))])


def test_the_limiter_at_the_ends_of_the_range_judges_without_crashing() -> None:
    """The retry storm's recorded decisions, judged as if the limiter ran at the slowest and the
    fastest rate accepted: both are violations (the trace's decisions were taken at other rates),
    computed by the replay and by the limiter rule alike, with no arithmetic error."""
    from traces.checking.replay import replay_records
    from traces.checking.scan import scan_trace
    from traces.format.records import header_from_record
    from traces.recording.examples import EXAMPLES

    from scan_oracle import events_table

    rows = [json.loads(line) for line in (EXAMPLES / "conformant-retry-storm-limited.jsonl").read_text().splitlines()]
    for qps in (1e-3, 1e9):
        limits = {**rows[0]["config"]["rate_limit"], "default_qps": qps, "send_msg_back_qps": qps}
        header = {**rows[0], "config": {**rows[0]["config"], "rate_limit": limits}}
        [result] = replay_records([header, *rows[1:]])
        assert result.verdict == "violation" and result.divergence is not None
        assert scan_trace(header_from_record(header), events_table(rows[1:]))["limiter_decisions_as_the_bucket_says"].violations > 0


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_a_queues_trace_records_as_response_events_only_the_put_paths_answers(good: list[Record], tmp_path: Path, suffix: str) -> None:
    from traces.format.project import project
    from traces.format.records import Observation
    from traces.format.write import TraceWriter

    queues = list(project(iter(good), Observation.QUEUES))
    at = next(i for i, r in enumerate(queues) if r["kind"] == "Response")
    assert queues[at]["responses"][0]["code"] == 0  # the SUCCESS of a send, written inside the put path
    with TraceWriter(tmp_path / f"fine.{suffix}") as w:
        w.write_all(queues)
    validate([str(tmp_path / f"fine.{suffix}")])
    queues[at] = {**queues[at], "responses": [{**queues[at]["responses"][0], "code": 2, "remark": "[OVERLOAD]system busy, start flow control for a while"}]}
    with TraceWriter(tmp_path / f"t.{suffix}") as w:
        w.write_all(queues)
    assert "a Response event of a 'queues' trace carries an answer written inside the put path (SUCCESS 0 or SYSTEM_ERROR 1), not code 2" in _refused(
        [str(tmp_path / f"t.{suffix}")]
    )


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
@pytest.mark.parametrize("row_group", [1_000, 3], ids=["one batch", "small batches"])
def test_an_opaque_that_arrives_twice_in_a_trace_is_refused_naming_the_event_and_field(
    good: list[Record], tmp_path: Path, suffix: str, row_group: int
) -> None:
    """The replays map an opaque to one request; another trace may use the same opaques."""
    from traces.format.write import TraceWriter

    arrivals = [i for i, r in enumerate(good) if r["kind"] == "RequestArrives"]
    other = [{**r, "trace_id": "other"} for r in good]
    with TraceWriter(tmp_path / f"fine.{suffix}", row_group=row_group) as w:
        w.write_all([*good, *other])
    assert validate([str(tmp_path / f"fine.{suffix}")]).events == 2 * (len(good) - 1)
    for first, again in ((arrivals[0], arrivals[1]), (arrivals[0], arrivals[-1]), (arrivals[-2], arrivals[-1])):
        reused = [*good[:again], {**good[again], "request_id": good[first]["request_id"]}, *good[again + 1 :]]
        with TraceWriter(tmp_path / f"t.{suffix}", row_group=row_group) as w:
            w.write_all(reused)
        message = _refused([str(tmp_path / f"t.{suffix}")])
        assert f"field 'request_id': trace {good[0]['trace_id']!r} seq {good[again]['seq']}: opaque {good[first]['request_id']} arrived before in this trace" in message
        where = f"t.jsonl:{again + 1}:" if suffix == "jsonl" else f"part-00000.parquet row {again}:"
        assert where in message, message


def test_a_file_uri_is_read_and_a_scheme_no_file_system_knows_is_refused_by_name() -> None:
    from traces.recording.examples import EXAMPLES

    assert len(validate([f"file://{EXAMPLES / 'conformant-5.3.3.jsonl'}"]).traces) == 1
    assert "nosuch://bucket/traces: cannot be opened: Unrecognized filesystem type in URI" in _refused(["nosuch://bucket/traces"])


def _queues(good: list[Record]) -> list[Record]:
    from traces.format.project import project
    from traces.format.records import Observation

    return list(project(iter(good), Observation.QUEUES))


def _first(records: list[Record], kind: str) -> int:
    return next(i for i, r in enumerate(records) if r["kind"] == kind)


def _changed(records: list[Record], index: int, **values: object) -> list[Record]:
    return [*records[:index], {**records[index], **values}, *records[index + 1 :]]


#: (the records, from the good trace; the whole message expected, after the file and line).
WHOLE_MESSAGES: list[tuple[str, Callable[[list[Record]], list[Record]], str]] = [
    ("header seq", lambda g: _changed(g, 0, seq=1), "1: field 'seq': a header has seq 0, got 1"),
    ("incomplete", lambda g: _changed(g, 0, recording_incomplete="the JFR file ends early"),
     "1: field 'recording_incomplete': the recorder did not record the whole run, so the trace cannot be judged: the JFR file ends early"),
    ("format", lambda g: _changed(g, 0, format_version="2"), "1: field 'format_version': unknown format version '2'; this reader knows '1'"),
    ("observation", lambda g: _changed(g, 0, observation="glass-box"),
     "1: field 'observation': 'glass-box' is not one of ['black-box', 'queues', 'full']"),
    ("config text", lambda g: _changed(g, 0, config="{"),
     "1: field 'config': malformed JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("config list", lambda g: _changed(g, 0, config=[]), "1: field 'config' must be an object"),
    ("no config", lambda g: _changed(g, 0, config=None), "1: field 'config' must be an object"),
    ("environment list", lambda g: _changed(g, 0, environment=[]), "1: field 'environment' must be an object"),
    ("bool for int", lambda g: _changed(g, _first(g, "RequestArrives"), io_thread=True), "{arrival}: field 'io_thread' must be int, got true"),
    ("int for bool", lambda g: _changed(g, _first(g, "RequestArrives"), oneway=0), "{arrival}: field 'oneway' must be bool, got 0"),
    ("no profile", lambda g: _changed(g, 0, profile=None), "1: field 'profile' is missing"),
    ("second header", lambda g: [g[0], g[0], *g[1:]], f"2: trace {'steady-5.3.3-0'!r} has a second header at seq 0"),
    ("level", lambda g: _changed(g, 0, observation="black-box"),
     f"2: field 'kind': {{kind}} is not observed at level 'black-box' (trace {'steady-5.3.3-0'!r} seq 1)"),
    ("time", lambda g: _changed(_queues(g), 3, ts=_queues(g)[2]["ts"] - 1),
     "4: field 'ts': trace 'steady-5.3.3-0' seq 3 has ts {ts}, before ts {ts_before} of seq 2: the events of a 'queues' trace must not go back in time"),
    ("responses", lambda g: _changed(g, _first(g, "RequestArrives"), responses="none"), "{arrival}: field 'responses' must be a list"),
    ("two answers", lambda g: _changed(_queues(g), _first(_queues(g), "Response"), responses=_queues(g)[_first(_queues(g), "Response")]["responses"] * 2),
     "{answer}: field 'responses': a Response event carries exactly one response, got 2"),
    ("remark", lambda g: _changed(g, _first(g, "RequestArrives"), responses=[{"request_id": 1, "code": 0, "remark": 5}]),
     "{arrival}: field 'responses[0].remark' must be a string or null"),
    ("queue", lambda g: _changed(g, _first(g, "FastFailureStopsAtHead"), queue="bogus"), "{head}: field 'queue': unknown executor 'bogus'"),
    ("long value", lambda g: _changed(g, _first(g, "RequestArrives"), topic=["x" * 100]),
     "{arrival}: field 'topic' must be str, got " + json.dumps(["x" * 100])[:80]),
]


@pytest.mark.parametrize(("what", "change", "message"), WHOLE_MESSAGES, ids=[w for w, _, _ in WHOLE_MESSAGES])
def test_each_problem_of_a_record_has_its_whole_message(
    good: list[Record], tmp_path: Path, what: str, change: Callable[[list[Record]], list[Record]], message: str
) -> None:
    records = change([json.loads(json.dumps(r)) for r in good])
    queues = _queues(good)
    expected = "t.jsonl:" + message.format(
        kind=good[1]["kind"], ts=queues[2]["ts"] - 1, ts_before=queues[2]["ts"],
        arrival=_first(good, "RequestArrives") + 1, answer=_first(queues, "Response") + 1, head=_first(good, "FastFailureStopsAtHead") + 1)
    lines = _refused([str(_write(tmp_path / "t.jsonl", records))]).splitlines()
    assert [line.removeprefix(f"{tmp_path}/") for line in lines] == [expected]


@pytest.mark.parametrize(
    ("line", "message"),
    [("\n", "t.jsonl:2: empty line"), ("[1, 2]\n", "t.jsonl:2: a record must be a JSON object, got list")],
)
def test_a_line_that_is_not_a_record(good: list[Record], tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path / "t.jsonl", good[:1])
    path.write_text(path.read_text() + line + json.dumps(good[1]) + "\n")
    assert _refused([str(path)]) == f"{tmp_path}/{message}"


def test_a_parquet_file_with_a_column_of_another_type_or_an_unknown_column(good: list[Record], tmp_path: Path) -> None:
    rows = [parquet_row(r) for r in good]
    retyped = pa.schema([f.with_type(pa.string()) if f.name == "seq" else f for f in ARROW_SCHEMA])
    pq.write_table(pa.Table.from_pylist([{**r, "seq": str(r["seq"])} for r in rows], schema=retyped), tmp_path / "a.parquet")
    assert _refused([str(tmp_path / "a.parquet")]) == f"{tmp_path}/a.parquet row 0: field 'seq': column has type string, expected int64"
    extra = ARROW_SCHEMA.append(pa.field("colour", pa.string()))
    pq.write_table(pa.Table.from_pylist([{**r, "colour": "red"} for r in rows], schema=extra), tmp_path / "b.parquet")
    assert _refused([str(tmp_path / "b.parquet")]) == f"{tmp_path}/b.parquet row 0: unknown column(s) ['colour']"


def test_the_problems_as_data_name_file_line_or_row_and_message(good: list[Record], tmp_path: Path) -> None:
    """TraceInputError.located: what a report shows of each bad file (flowspec check's JSON)."""
    from traces.format import read
    from traces.format.read import InputProblem, check_part, Validator

    _write(tmp_path / "a.jsonl", [good[0], {**good[1], "seq": 5}])
    rows = [parquet_row({**r, "trace_id": "b"}) for r in good[:4]]
    pq.write_table(pa.Table.from_pylist([*rows[:3], {**rows[3], "seq": 9}], schema=ARROW_SCHEMA), tmp_path / "b.parquet")
    (tmp_path / "c.jsonl").write_text("")
    missing = str(tmp_path / "nothing-here")
    with pytest.raises(TraceInputError) as e:
        validate([str(tmp_path / "a.jsonl"), str(tmp_path / "b.parquet"), str(tmp_path / "c.jsonl")])
    a, b, c = (str(tmp_path / n) for n in ("a.jsonl", "b.parquet", "c.jsonl"))
    seq = f"field 'seq': trace {good[0]['trace_id']!r} seq"
    assert e.value.located == (
        {"file": a, "line": 2, "message": f"{seq} 5 after seq 0 skips seq 1..4"},
        {"file": b, "row": 3, "message": "field 'seq': trace 'b' seq 9 after seq 2 skips seq 3..8"},
        {"file": c, "message": "empty: no trace records"},
    )
    assert str(e.value).split("\n") == [f"{a}:2: {seq} 5 after seq 0 skips seq 1..4", f"{b} row 3: field 'seq': trace 'b' seq 9 after seq 2 skips seq 3..8",
                                         f"{c}: empty: no trace records"]
    with pytest.raises(TraceInputError) as e:
        validate([missing, a])
    assert e.value.located == ({"file": missing, "message": "no such file or directory"},)
    with pytest.raises(TraceInputError) as e:
        validate(["nosuch://bucket/traces", missing])
    assert e.value.located == ({"file": missing, "message": "no such file or directory"},
                               {"file": "nosuch://bucket/traces", "message": "cannot be opened: Unrecognized filesystem type in URI: nosuch://bucket/traces"})
    with pytest.raises(TraceInputError) as e:
        (tmp_path / "no-traces").mkdir()
        (tmp_path / "nor-here").mkdir()
        validate([str(tmp_path / "no-traces"), str(tmp_path / "nor-here")])
    assert e.value.located == ({"message": str(e.value)},)
    assert str(e.value) == f"{tmp_path / 'no-traces'}, {tmp_path / 'nor-here'}: no trace files (*.jsonl, *.parquet) found"
    with pytest.raises(InputProblem) as p:
        check_part(missing, Validator())
    assert isinstance(p.value.unreadable, FileNotFoundError) and p.value.message.startswith("cannot be opened: ")
    assert p.value.where == read.Location(missing, line=1) and str(p.value).startswith(f"{missing}:1: cannot be opened: ")
    assert "No such file or directory" in p.value.message


def test_lines_at_the_length_limit(good: list[Record], tmp_path: Path) -> None:
    """A line of MAX_LINE_BYTES (its newline not counted) is read, with or without the newline; one byte more is refused."""
    arrival = _first(good, "RequestArrives")
    before = "".join(json.dumps(r) + "\n" for r in good[:arrival])

    def line(size: int) -> str:
        padding = size - len(json.dumps({**good[arrival], "topic": ""}))
        return json.dumps({**good[arrival], "topic": "x" * padding})

    assert len(line(MAX_LINE_BYTES)) == MAX_LINE_BYTES
    for ending in ("\n", ""):
        path = tmp_path / "t.jsonl"
        path.write_text(before + line(MAX_LINE_BYTES) + ending)
        assert validate([str(path)]).events == arrival
    path.write_text(before + line(MAX_LINE_BYTES + 1) + "\n")
    assert _refused([str(path)]) == f"{path}:{arrival + 1}: line is longer than {MAX_LINE_BYTES} bytes; not a trace record"


def test_a_file_whose_disk_fails_mid_read_is_named_at_the_line_it_stopped(good: list[Record], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from traces.format import read

    first = (json.dumps(good[0]) + "\n").encode()

    class FailsAfterTheFirstLine(io.RawIOBase):
        given = False

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            if self.given:
                raise OSError("the disk went away")
            self.given = True
            buffer[: len(first)] = first
            return len(first)

    monkeypatch.setattr(read, "open_input", lambda source: FailsAfterTheFirstLine())
    with pytest.raises(read.InputProblem) as e:
        read.check_part("t.jsonl", read.Validator())
    assert e.value.where == read.Location("t.jsonl", line=2) and str(e.value) == "t.jsonl:2: cannot be read: the disk went away"
    assert isinstance(e.value.unreadable, OSError)
