"""The vectorised Parquet validation (Validator.accept_batch) agrees with the per-row validator.

accept_batch may take a batch only if Validator.check would take every row of it in turn, and
must then leave the same bookkeeping; when it declines, the reader re-checks the batch row by
row, so the messages are Validator.check's. The table below corrupts one field (or the order)
of valid batches cut from the example traces, at each observation level, and requires both
validators to agree on clean / not clean for every corruption.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

import traces.format.read as read
from spec.profiles import ExecutorName
from traces.format.records import (
    ARROW_SCHEMA, HEADER_KIND, JAVA_INT_MAX, JAVA_INT_MIN, KINDS, LEVEL_KINDS, REPEATED_STRINGS, RESPONSE_KIND, Observation, header_from_record, header_record,
)
from traces.format.read import TraceInputError, Validator, validate
from traces.format.write import parquet_row

Record = dict[str, Any]
EXAMPLES = Path(__file__).parent.parent / "traces" / "examples"


def _example(name: str) -> list[Record]:
    """An example trace as Parquet rows (the header's objects as JSON text)."""
    return [parquet_row(json.loads(line)) for line in (EXAMPLES / name).read_text().splitlines()]


def _at_level(records: list[Record], observation: Observation, trace_id: str) -> list[Record]:
    """The trace as a recorder at ``observation`` would have written it: the kinds that level
    shows, renumbered; black-box: arrivals without io_thread, every response its own event."""
    header = {**records[0], "observation": observation.value, "trace_id": trace_id}
    events: list[Record] = []
    for r in records[1:]:
        if observation is Observation.BLACK_BOX:
            if r["kind"] == "RequestArrives":
                events.append({**r, "io_thread": None, "responses": []})
            events += [{"ts": r["ts"], "kind": RESPONSE_KIND, "responses": [resp]} for resp in r.get("responses", [])]
        elif r["kind"] in LEVEL_KINDS[observation]:
            events.append(r)
    return [header] + [{**e, "trace_id": trace_id, "seq": i} for i, e in enumerate(events, 1)]


def _batch(rows: list[Record]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=ARROW_SCHEMA)


def _as_read(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch as the reader gets it from Parquet: the repeated strings dictionary-encoded."""
    columns = [pc.dictionary_encode(c) if n in REPEATED_STRINGS else c for n, c in zip(batch.schema.names, batch.columns)]
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _state(v: Validator) -> tuple[object, ...]:
    return v.events, dict(v.kinds), [(t, p.header, p.last_seq, p.last_ts, p.kinds, p.opaques) for t, p in v.traces.items()]


def _row_by_row(v: Validator, batch: pa.RecordBatch) -> bool:
    try:
        for record in batch.to_pylist():
            v.check(record)
    except read._Bad:
        return False
    return True


def _taken(rows: list[list[Record]]) -> Validator:
    """A validator that has taken ``rows``, a batch at a time."""
    v = Validator()
    for batch in rows:
        assert _row_by_row(v, _batch(batch))
    return v


def _copy(v: Validator) -> Validator:
    """A validator in ``v``'s state that shares ``v``'s presence table: the table is built by ``v``, in the
    test, so a mutated rule is still judged, without rebuilding it three times per corruption (half the
    corruption cases' time, and far more under mutmut, where each of its 80 rules is a trampolined call)."""
    c = copy.copy(v)
    c.traces = {t: dataclasses.replace(p, opaques=set(p.opaques)) for t, p in v.traces.items()}
    c.kinds = Counter(v.kinds)
    return c


def _agree(before: Validator, batch: pa.RecordBatch, what: str) -> bool:
    """Both validators judge ``batch`` from the state ``before``; they must agree, and a taken
    batch must leave the same state (a refused one, the state before it). Whether it is clean."""
    slow = _copy(before)
    clean = _row_by_row(slow, batch)
    for variant in (batch, _as_read(batch)):
        fast = _copy(before)
        taken = fast.accept_batch(variant)
        assert taken == clean, f"{what}: accept_batch says {'clean' if taken else 'not clean'}, Validator.check {'clean' if clean else 'not clean'}"
        assert _state(fast) == _state(slow if clean else before), what
    return clean


# -- The table of corruptions ------------------------------------------------------------------

_EXECUTORS = [n.value for n in ExecutorName]
_RESPONSE = {"request_id": 1, "code": 0, "remark": None}

#: Replacement values per column (besides null, which every column gets).
_VALUES: dict[str, list[object]] = {
    "trace_id": ["other", ""],
    "seq": [0, -1, 1, 2**63 - 1],
    "kind": [*KINDS, RESPONSE_KIND, HEADER_KIND, "WorkerDances"],
    "executor": [*_EXECUTORS, "bogus"],
    "queue": [*_EXECUTORS, "bogus"],
    "code": [0, 10, 15, 99999],
    "format_version": ["2", ""],
    "observation": [*[o.value for o in Observation], "glass-box"],
    "profile": ["5.3.3", "9.9.9"],
    "config": ["{", "[]", "{}"],
    "environment": ["{", "[]", "{}", '{"ha_appends": 1}', '{"storms": true}'],
    "responses": [[], [_RESPONSE, _RESPONSE], [None], [{**_RESPONSE, "request_id": None}], [{**_RESPONSE, "code": None}]],
}
_BY_TYPE: dict[pa.DataType, list[object]] = {pa.int64(): [0, -1, 7], pa.string(): ["", "x"], pa.bool_(): [True, False]}


def _replacements(name: str, value: object) -> Iterator[object]:
    yield None
    for v in _VALUES.get(name, _BY_TYPE.get(ARROW_SCHEMA.field(name).type, [])):
        if v != value:
            yield v
    if isinstance(value, int) and not isinstance(value, bool):
        yield from (value + 1, value - 1)


def _value_changes(rows: list[Record]) -> Iterator[tuple[str, list[Record]]]:
    """Every single-field change of one row of each kind (and of the header)."""
    firsts: dict[str, int] = {}
    for i, r in enumerate(rows):
        firsts.setdefault(r["kind"], i)
    for i in sorted(firsts.values()):
        for name in ARROW_SCHEMA.names:
            for value in _replacements(name, rows[i].get(name)):
                changed = list(rows)
                changed[i] = {**rows[i], name: value}
                yield f"row {i} ({rows[i]['kind']}) {name}={value!r}", changed


def _order_changes(rows: list[Record]) -> Iterator[tuple[str, list[Record]]]:
    """Every row dropped, repeated, or swapped with the next."""
    for i in range(len(rows)):
        yield f"drop row {i}", rows[:i] + rows[i + 1 :]
        yield f"repeat row {i}", rows[: i + 1] + rows[i:]
        if i + 1 < len(rows):
            yield f"swap rows {i}, {i + 1}", rows[:i] + [rows[i + 1], rows[i]] + rows[i + 2 :]


@dataclass(frozen=True)
class Case:
    """Valid batches ``before`` (already taken), then ``rows`` to corrupt."""

    name: str
    before: list[list[Record]]
    rows: list[Record]


def _interleave(a: list[Record], b: list[Record]) -> list[Record]:
    return [r for pair in zip(a, b) for r in pair] + a[len(b) :] + b[len(a) :]


def _one_of_each_kind() -> list[Record]:
    """A full trace with the first event of each kind any example records (the checks look at
    each record's shape and order, not at whether the broker could have done it)."""
    firsts: dict[str, Record] = {}
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        for r in _example(path.name)[1:]:
            firsts.setdefault(r["kind"], r)
    return _at_level([_example("conformant-5.3.3.jsonl")[0], *firsts.values()], Observation.FULL, "every-kind")


@functools.cache
def _cases() -> list[Case]:
    full = _example("conformant-5.3.3.jsonl")
    pool = _example("conformant-pool-exhaustion.jsonl")
    cases = []
    for observation in Observation:
        trace = _at_level(full, observation, f"t-{observation.value}")
        cases.append(Case(f"{observation.value}: header and events in one batch", [], trace[:30]))
        cases.append(Case(f"{observation.value}: events after an earlier batch", [trace[:20]], trace[20:45]))
    a, b = _at_level(pool, Observation.FULL, "a"), _at_level(full, Observation.QUEUES, "b")
    cases.append(Case("two traces interleaved, one header earlier", [a[:10]], _interleave(a[10:30], b[:20])))
    every = _one_of_each_kind()
    cases.append(Case("full: one event of each recorded kind, header earlier", [every[:1]], every[1:]))
    return cases


#: The mutation run's share of the table (docs/checker-mutants.md): every change of order (a few per row,
#: each its own path: a second header, an event before its header, a seq gap) and every fifth change of a
#: value. The values walk row, column, value, so a fifth still changes most columns of each kind's row;
#: the two tests below together judge every corruption, and the ordinary suite runs both.
SAMPLE = 5


def _judge_corruptions(case: Case, sampled: bool) -> int:
    """How many of the case's corruptions (the sample, or the rest) both validators refuse; they must agree on each."""
    before = _taken(case.before)
    assert _agree(before, _batch(case.rows), "unchanged")
    values = ((what, rows) for i, (what, rows) in enumerate(_value_changes(case.rows)) if (i % SAMPLE == 0) == sampled)
    chosen = itertools.chain(values, _order_changes(case.rows) if sampled else ())
    return sum(not _agree(before, _batch(rows), what) for what, rows in chosen)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_accept_batch_agrees_with_check_on_every_fifth_single_corruption(case: Case) -> None:
    assert _judge_corruptions(case, sampled=True) > 100  # the table really breaks batches, not only harmless fields


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_accept_batch_agrees_with_check_on_the_other_single_corruptions(case: Case) -> None:
    """Left out of the mutation run, which the sample above judges in a fifth of the time."""
    assert _judge_corruptions(case, sampled=False) > 150


@given(st.data())
def test_accept_batch_agrees_with_check_on_several_corruptions(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(_cases()))
    rows = list(case.rows)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(rows) - 1))
        name = data.draw(st.sampled_from(ARROW_SCHEMA.names))
        rows[i] = {**rows[i], name: data.draw(st.sampled_from(list(_replacements(name, rows[i].get(name)))))}
    _agree(_taken(case.before), _batch(rows), repr(rows))


def test_the_kind_tables_are_the_kinds_each_check_is_about() -> None:
    """accept_batch's per-kind tables are built on import, before mutmut forks a mutant, so a mutated
    _by_kind would never be judged through them: build each again here."""
    tests: list[tuple[Any, Callable[[str], bool]]] = [
        (read._IS_ARRIVAL, lambda k: k == "RequestArrives"), (read._IS_RESPONSE, lambda k: k == RESPONSE_KIND)]
    for table, test in tests:
        again = read._by_kind(test)
        assert again.dtype == bool and again.tolist() == table.tolist() == [test(k) for k in read._EVENT_KINDS] + [False]
    assert read._by_kind(lambda k: True).tolist() == [True] * len(read._EVENT_KINDS) + [False]  # never the header


def test_closed_traces_forget_their_opaques_and_nothing_else() -> None:
    """After a layout's unit its traces are whole (traces.checking.validation.validate_parts): their
    opaques, kept only to refuse a reused one, are dropped; the rest of what validation keeps stays."""
    full = _example("conformant-5.3.3.jsonl")
    v = _taken([_at_level(full, Observation.FULL, "a")[:30], _at_level(full, Observation.QUEUES, "b")[:30]])
    assert all(p.opaques for p in v.traces.values())
    def rest(v: Validator) -> tuple[object, ...]:
        return v.events, dict(v.kinds), [(t, p.header, p.last_seq, p.last_ts, p.kinds) for t, p in v.traces.items()]

    kept = rest(v)
    v.close_traces()
    assert [p.opaques for p in v.traces.values()] == [set(), set()] and rest(v) == kept
    assert _row_by_row(v, _batch(_at_level(full, Observation.FULL, "c")[:5]))  # and it takes new traces


def test_an_empty_batch_is_taken_and_changes_nothing() -> None:
    """check_part's filter of a batch to its traces' rows can leave none of them."""
    v = _taken([_at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:10]])
    kept = _state(_copy(v))
    assert v.accept_batch(_batch([])) and _state(v) == kept


def test_a_batch_of_headers_only() -> None:
    """A batch may hold no event (a file's last batch of headers, or check_part's rows of its traces)."""
    full = _example("conformant-5.3.3.jsonl")
    before = _taken([_at_level(full, Observation.FULL, "t")[:10]])
    headers = [_at_level(full, o, f"new-{o.value}")[0] for o in Observation]
    assert _agree(before, _batch(headers), "headers only") and _agree(Validator(), _batch(headers[:1]), "one header")


def test_codes_at_the_ends_of_a_java_int() -> None:
    trace = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:30]
    arrival = next(i for i, r in enumerate(trace) if r["kind"] == "RequestArrives")
    for code, valid in ((JAVA_INT_MIN - 1, False), (JAVA_INT_MIN, True), (JAVA_INT_MAX, True), (JAVA_INT_MAX + 1, False)):
        rows = [*trace[:arrival], {**trace[arrival], "code": code}, *trace[arrival + 1 :]]
        assert _agree(Validator(), _batch(rows), f"code {code}") == valid


def test_an_opaque_reused_within_either_trace_of_a_batch() -> None:
    """accept_batch sorts the batch's arrivals by trace, then opaque: a repeat is two neighbours of one trace."""
    full = _example("conformant-5.3.3.jsonl")
    a, b = _at_level(full, Observation.FULL, "a")[:30], _at_level(full, Observation.QUEUES, "b")[:30]
    assert _agree(Validator(), _batch(_interleave(a, b)), "the same opaques in two traces")
    for reusing in ("a", "b"):
        rows = a if reusing == "a" else b
        arrivals = [i for i, r in enumerate(rows) if r["kind"] == "RequestArrives"]
        again = [*rows[: arrivals[1]], {**rows[arrivals[1]], "request_id": rows[arrivals[0]]["request_id"]}, *rows[arrivals[1] + 1 :]]
        batch = _interleave(again, b) if reusing == "a" else _interleave(a, again)
        assert not _agree(Validator(), _batch(batch), f"an opaque reused in trace {reusing}")


def test_a_response_event_without_its_response() -> None:
    trace = _at_level(_example("conformant-5.3.3.jsonl"), Observation.BLACK_BOX, "t")[:30]
    at = next(i for i, r in enumerate(trace) if r["kind"] == RESPONSE_KIND)
    for responses in (None, []):
        assert not _agree(Validator(), _batch([*trace[:at], {**trace[at], "responses": responses}, *trace[at + 1 :]]), f"responses {responses}")


def test_a_header_without_ts() -> None:
    """Validator.check reads no ts of a header, so a header may leave it null (its events may not)."""
    trace = _at_level(_example("conformant-5.3.3.jsonl"), Observation.QUEUES, "t")[:30]
    assert _agree(Validator(), _batch([{**trace[0], "ts": None}, *trace[1:]]), "a header without ts")


def test_a_queues_trace_answers_only_the_put_path_in_a_batch_too() -> None:
    """A 'queues' trace records as Response events only the put path's answers (SUCCESS, SYSTEM_ERROR)."""
    from traces.format.project import project

    full = [json.loads(line) for line in (EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()]
    rows = [parquet_row(r) for r in project(iter(full), Observation.QUEUES)][:60]
    answers = [i for i, r in enumerate(rows) if r["kind"] == RESPONSE_KIND]
    assert answers, "the example's queues projection has Response events"
    assert _agree(Validator(), _batch(rows), "the put path's answers")
    for code, valid in ((1, True), (2, False)):
        at = answers[0]
        changed = [*rows[:at], {**rows[at], "responses": [{**rows[at]["responses"][0], "code": code}]}, *rows[at + 1 :]]
        assert _agree(Validator(), _batch(changed), f"code {code}") == valid


def test_a_second_header_of_a_trace_is_refused_in_a_later_batch_and_in_the_same_one() -> None:
    trace = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")
    other = _at_level(_example("conformant-pool-exhaustion.jsonl"), Observation.QUEUES, "u")
    before = _taken([trace[:20]])
    assert not _agree(before, _batch([*trace[20:25], other[0], trace[0], *trace[25:30]]), "a second header a batch later")
    assert not _agree(Validator(), _batch([trace[0], *trace[1:5], trace[0]]), "a second header last in its batch")
    assert _agree(before, _batch([other[0], *trace[20:25], *other[1:5]]), "another trace's header")


def test_a_trace_validated_elsewhere_joins_with_its_summary_and_kinds() -> None:
    """What a Spark task sends to the driver (summaries, kinds) rebuilds the task's validator there,
    all but the opaques, which a whole trace no longer needs."""
    full = _example("conformant-5.3.3.jsonl")
    task = _taken([_at_level(full, Observation.FULL, "a")[:30], _at_level(full, Observation.BLACK_BOX, "b")[:12]])
    assert task.header_records() == {t: header_record(p.header) for t, p in task.traces.items()}
    summaries = task.summaries()
    assert summaries == {t: read.TraceSummary(header_record(p.header), p.last_seq, p.last_ts) for t, p in task.traces.items()}
    own = _at_level(full, Observation.QUEUES, "c")[:5]
    driver = _taken([own])
    driver.join(summaries, task.kinds)
    task.close_traces()
    assert driver.events == task.events + 4 and driver.kinds == task.kinds + Counter(r["kind"] for r in own[1:])
    assert [(t, p) for t, p in driver.traces.items() if t != "c"] == list(task.traces.items())


def test_seqs_at_the_end_of_int64() -> None:
    """accept_batch computes each trace's expected seqs in int64: up to the largest they are exact, and
    a batch whose seqs would wrap past it (to the smallest) is refused, as Validator.check refuses it."""
    trace = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")
    header = header_from_record(trace[0])

    def near_the_end(last_seq: int) -> Validator:
        return Validator({"t": read._TraceProgress(header, last_seq, LEVEL_KINDS[Observation.FULL])})

    top = 2**63 - 1
    assert _agree(near_the_end(top - 2), _batch([{**trace[1], "seq": top - 1}, {**trace[2], "seq": top}]), "the last two seqs")
    assert not _agree(near_the_end(top), _batch([{**trace[1], "seq": -top - 1}]), "a seq past the largest, wrapped")


def test_a_dictionary_that_repeats_values_or_holds_unused_ones() -> None:
    # Parquet may hand a batch a dictionary shared with other batches: values no row uses, or
    # one value twice; a trace split over two dictionary entries is still one trace.
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:12]
    batch = _batch(rows)
    ids = pa.DictionaryArray.from_arrays(pa.array([0, 2] * 6, pa.int32()), pa.array(["t", "unused", "t"]))
    split = batch.set_column(batch.schema.get_field_index("trace_id"), "trace_id", ids)
    assert Validator().accept_batch(split) and _row_by_row(Validator(), split)
    reordered = pa.RecordBatch.from_pylist([rows[0], rows[2], rows[1], *rows[3:]], schema=ARROW_SCHEMA)
    reordered = reordered.set_column(reordered.schema.get_field_index("trace_id"), "trace_id", ids)
    assert not Validator().accept_batch(reordered) and not _row_by_row(Validator(), reordered)


# -- Files: the reader takes clean batches whole and reports the first problem row by row ---------


def _write_parquet(path: Path, rows: list[Record], schema: pa.Schema = ARROW_SCHEMA) -> str:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=50)
    return str(path)


def _message(paths: list[str]) -> str:
    with pytest.raises(TraceInputError) as e:
        validate(paths)
    return str(e.value)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "PARQUET_BATCH", 16)


def _row_by_row_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Validator, "accept_batch", lambda self, batch: False)


def test_a_clean_file_is_never_checked_row_by_row(small_batches: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")
    path = _write_parquet(tmp_path / "t.parquet", rows)

    def refuse(self: Validator, record: Record) -> None:
        raise AssertionError("Validator.check called on a clean batch")

    monkeypatch.setattr(Validator, "check", refuse)
    v = validate([path])
    assert v.events == len(rows) - 1 and v.traces["t"].last_seq == len(rows) - 1


def _after(rows: list[Record], test: Callable[[Record], bool]) -> int:
    """The first row past the first batches (row 40) for which ``test`` holds."""
    return next(i for i, r in enumerate(rows) if i > 40 and test(r))


def _carrying(field: str) -> Callable[[list[Record]], int]:
    """The first row past row 40 that carries ``field`` (a non-empty value)."""
    return lambda rows: _after(rows, lambda r: bool(r.get(field)))


def _second_header_without_config(rows: list[Record]) -> int:
    rows.insert(131, {**rows[0], "trace_id": "second", "config": "{}"})
    return 131


def _set(where: Callable[[list[Record]], int], **values: object) -> Callable[[list[Record]], int]:
    def change(rows: list[Record]) -> int:
        index = where(rows)
        rows[index].update(values)
        return index

    return change


def _at(index: int) -> Callable[[list[Record]], int]:
    return lambda rows: index


#: (what the message names, the change; it returns the row it changed).
BAD_ROWS: list[tuple[str, Callable[[list[Record]], int]]] = [
    ("field 'seq': trace 't' seq 102 after seq 99", _set(_at(100), seq=102)),
    ("field 'seq' is missing", _set(_at(140), seq=None)),
    ("field 'kind': unknown kind 'WorkerDances'", _set(_at(77), kind="WorkerDances")),
    ("field 'kind' is missing", _set(_at(130), kind=None)),
    ("field 'trace_id' is missing", _set(_at(130), trace_id=None)),
    ("field 'executor': unknown executor 'bogus'", _set(_carrying("executor"), executor="bogus")),
    ("field 'responses[0]' must be an object", _set(_carrying("responses"), responses=[None])),
    ("field 'io_thread' is missing", _set(lambda rows: _after(rows, lambda r: r["kind"] == "RequestArrives"), io_thread=None)),
    ("field config.executors is missing", _second_header_without_config),
]


@pytest.mark.parametrize(("message", "change"), BAD_ROWS, ids=[m for m, _ in BAD_ROWS])
def test_a_bad_row_in_a_later_batch_gets_the_row_by_row_message(
    small_batches: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: str, change: Callable[[list[Record]], int]
) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:200]
    index = change(rows)
    # A file may declare trace_id/seq/kind nullable: the schema check compares types only.
    schema = pa.schema([f.with_nullable(True) for f in ARROW_SCHEMA])
    path = _write_parquet(tmp_path / "t.parquet", rows, schema)
    vectorised = _message([path])
    assert f"t.parquet row {index}: " in vectorised and message in vectorised, vectorised
    _row_by_row_only(monkeypatch)
    assert _message([path]) == vectorised


def test_check_part_reads_only_its_row_groups_and_traces_and_names_the_files_rows(small_batches: None, tmp_path: Path) -> None:
    """A Spark validation task's part (traces.checking.validation): some row groups of a file, only some
    traces' rows (and rows of no trace, which are invalid); a problem is named by the file's own row or line."""
    full = _example("conformant-5.3.3.jsonl")
    rows = _interleave(_at_level(full, Observation.FULL, "a")[:80], _at_level(full, Observation.QUEUES, "b")[:80])
    bad = next(i for i in range(110, 150) if rows[i]["trace_id"] == "b")  # in the third row group (100-149)
    rows[bad] = {**rows[bad], "seq": 1}
    path = _write_parquet(tmp_path / "t.parquet", rows)  # row groups of 50
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n" for r in rows))
    for source in (path, str(jsonl)):
        v = Validator()
        read.check_part(source, v, None, frozenset({"a"}))
        assert list(v.traces) == ["a"] and v.events == 79
        with pytest.raises(read.InputProblem) as e:
            read.check_part(source, Validator(), None, frozenset({"b"}))
        where = f"t.parquet row {bad}: " if source == path else f"t.jsonl:{bad + 1}: "
        assert f"{where}field 'seq': trace 'b'" in str(e.value), str(e.value)
    for source in (path, str(jsonl)):
        v = Validator()
        read.check_part(source, v, None, frozenset())  # a part of no trace takes nothing
        assert v == Validator()
    v = Validator()
    read.check_part(path, v, [0, 1], frozenset({"a", "b"}))
    assert v.events == 98 and v.traces["a"].last_seq + v.traces["b"].last_seq == 98
    later = _copy(v)
    read.check_part(path, v, [2], frozenset({"a"}))  # a's rows of the third group follow on
    assert v.traces["a"].last_seq == 74
    with pytest.raises(read.InputProblem, match=f"t.parquet row {bad}: field 'seq'"):
        read.check_part(path, later, [2], None)
    nameless = _write_parquet(tmp_path / "n.parquet", [*rows[:10], {**rows[10], "trace_id": None}], pa.schema([f.with_nullable(True) for f in ARROW_SCHEMA]))
    with pytest.raises(read.InputProblem, match="row 10: field 'trace_id' is missing"):
        read.check_part(nameless, Validator(), None, frozenset({"a"}))


def test_a_trace_continues_across_batches_and_files(small_batches: None, tmp_path: Path) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.QUEUES, "t")
    first = _write_parquet(tmp_path / "a.parquet", rows[:101])
    second = _write_parquet(tmp_path / "b.parquet", rows[101:])
    v = validate([first, second])
    assert v.events == len(rows) - 1 and v.traces["t"].last_seq == len(rows) - 1
    gap = _write_parquet(tmp_path / "b.parquet", rows[102:])
    assert f"b.parquet row 0: field 'seq': trace 't' seq 102 after seq 100 skips seq 101..101" in _message([first, gap])


def test_nulls_that_a_black_box_trace_may_leave(small_batches: None, tmp_path: Path) -> None:
    full = _example("conformant-5.3.3.jsonl")
    black_box = _at_level(full, Observation.BLACK_BOX, "b")
    assert any(r["kind"] == "RequestArrives" and r["io_thread"] is None for r in black_box)
    assert validate([_write_parquet(tmp_path / "b.parquet", black_box)]).events == len(black_box) - 1
    queues = [{**r, "io_thread": None} if r["kind"] == "RequestArrives" else r for r in _at_level(full, Observation.QUEUES, "q")]
    assert "field 'io_thread' is missing" in _message([_write_parquet(tmp_path / "q.parquet", queues)])


def test_a_parquet_file_written_before_an_optional_header_column_existed(small_batches: None, tmp_path: Path) -> None:
    """``recording_incomplete`` joined format 1 after Parquet traces were written without it: such a
    file reads as if the column were null; a required column missing is still refused."""
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")
    older = pa.schema([f for f in ARROW_SCHEMA if f.name != "recording_incomplete"])
    path = _write_parquet(tmp_path / "t.parquet", [{k: v for k, v in r.items() if k != "recording_incomplete"} for r in rows], older)
    v = validate([path])
    assert v.events == len(rows) - 1
    current = _write_parquet(tmp_path / "current.parquet", rows)
    assert [r.data for r in read.read_records([path])] == [r.data for r in read.read_records([current])]
    no_topic = pa.schema([f for f in older if f.name != "topic"])
    assert "field 'topic': column missing" in _message([_write_parquet(tmp_path / "u.parquet", rows, no_topic)])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"worker": 0}, "t.jsonl:3: field 'worker' does not belong to kind RequestArrives"),
        ({"profile": "5.3.3"}, "t.jsonl:3: field 'profile' belongs to the header, not to kind RequestArrives"),
        ({"worker": None, "profile": None}, ""),
    ],
)
def test_a_json_record_with_a_field_of_another_kind(tmp_path: Path, extra: Record, message: str) -> None:
    records = [json.loads(line) for line in (EXAMPLES / "conformant-5.3.3.jsonl").read_text().splitlines()][:3]
    assert records[2]["kind"] == "RequestArrives"
    records[2].update(extra)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    if message:
        assert message in _message([str(path)])
    else:
        assert validate([str(path)]).events == 2


def test_read_records_yields_every_parquet_row_as_it_was_written(small_batches: None, tmp_path: Path) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.QUEUES, "t")
    path = _write_parquet(tmp_path / "t.parquet", rows)
    records = list(read.read_records([path]))
    assert [r.data for r in records] == [r.data for r in map(lambda wr: read.Record(*wr), read.raw_records(Path(path)))]
    assert [r.where for r in records] == [read.Location(path, row=i) for i in range(len(rows))]
    assert [{k: v for k, v in r.data.items() if v is not None} for r in records] == [
        {k: v for k, v in r.items() if v is not None} for r in rows
    ]


def test_the_raw_records_of_either_format_with_their_locations(small_batches: None, tmp_path: Path) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.QUEUES, "t")[:40]
    path = _write_parquet(tmp_path / "t.parquet", rows)
    assert [where for where, _ in read.raw_records(path)] == [read.Location(path, row=i) for i in range(len(rows))]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n" for r in rows))
    raw = list(read.raw_records(jsonl))
    assert [where for where, _ in raw] == [read.Location(str(jsonl), line=i) for i in range(1, len(rows) + 1)]
    assert [record for _, record in raw] == [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [(r.where, r.data) for r in read.read_records([str(jsonl)])] == raw


def test_a_column_added_to_the_format_later_reads_as_nulls_of_its_type(small_batches: None, tmp_path: Path) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:20]
    older = pa.schema([f for f in ARROW_SCHEMA if f.name != "recording_incomplete"])
    path = _write_parquet(tmp_path / "t.parquet", [{k: v for k, v in r.items() if k != "recording_incomplete"} for r in rows], older)
    for _, batch in read._parquet_batches(path):
        assert batch.schema.names == ARROW_SCHEMA.names and batch.schema.field("recording_incomplete").type == pa.string()
        assert batch.column("recording_incomplete").null_count == batch.num_rows


def test_validation_takes_a_clean_batch_without_building_its_records(small_batches: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only validation wants nothing but the verdict (read._read's keep): no record of a clean batch is built."""
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")
    path = _write_parquet(tmp_path / "t.parquet", rows)

    def refuse(*args: object) -> Iterator[tuple[read.Location, Record]]:
        raise AssertionError("the records of a clean batch were built")

    monkeypatch.setattr(read, "_rows", refuse)
    assert validate([path]).events == len(rows) - 1
    v = Validator()
    read.check_part(path, v)
    assert v.events == len(rows) - 1


def test_a_parquet_file_that_cannot_be_opened_or_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file system's own error (this node could not read it; another may) is kept apart from a file that
    is not valid Parquet, with the row of the file it stopped at."""
    missing = str(tmp_path / "missing.parquet")
    with pytest.raises(read.InputProblem) as e:
        read.check_part(missing, Validator())
    assert e.value.where == read.Location(missing, row=0) and isinstance(e.value.unreadable, FileNotFoundError)
    assert e.value.message.startswith("cannot be opened: ") and "No such file or directory" in e.value.message
    path = _write_parquet(tmp_path / "t.parquet", _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:20])
    Path(tmp_path / "cut.parquet").write_bytes(Path(path).read_bytes()[:-100])
    with pytest.raises(read.InputProblem) as e:
        read.check_part(str(tmp_path / "cut.parquet"), Validator())
    assert e.value.message.startswith("not a readable Parquet file: ") and e.value.unreadable is None
    opened = pq.ParquetFile

    def gone(*args: Any, **kwargs: Any) -> pq.ParquetFile:
        raise OSError("the disk went away")

    for when in ("footer", "data"):
        # The footer is read by a first ParquetFile, the data by a second, given the footer's metadata.
        monkeypatch.setattr(pq, "ParquetFile", lambda *a, **k: gone() if when == "footer" or "metadata" in k else opened(*a, **k))
        with pytest.raises(read.InputProblem) as e:
            read.check_part(path, Validator())
        assert isinstance(e.value.unreadable, OSError) and str(e.value.unreadable) == "the disk went away"
        expected = "not a readable Parquet file" if when == "footer" else "unreadable Parquet data"
        assert str(e.value) == f"{path} row 0: {expected}: the disk went away"


def test_an_optional_column_left_out_does_not_end_the_check_of_the_others(tmp_path: Path) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:5]
    schema = pa.schema([f.with_type(pa.int64()) if f.name == "recording_incomplete" else f for f in ARROW_SCHEMA if f.name != "environment"])
    path = _write_parquet(tmp_path / "t.parquet", [{k: v for k, v in r.items() if k != "environment"} for r in rows], schema)
    assert _message([path]) == f"{path} row 0: field 'recording_incomplete': column has type int64, expected string"


def test_the_batches_of_a_parquet_file_are_in_the_readers_schema(small_batches: None, tmp_path: Path) -> None:
    """Whatever the order of the file's columns: ARROW_SCHEMA's order, the repeated strings dictionary-encoded."""
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:40]
    path = _write_parquet(tmp_path / "t.parquet", rows, pa.schema(list(reversed(ARROW_SCHEMA))))
    batches = [batch for _, batch in read._parquet_batches(path)]
    assert len(batches) == 3 and all(batch.schema.names == ARROW_SCHEMA.names for batch in batches)
    assert all(pa.types.is_dictionary(batch.schema.field(n).type) == (n in REPEATED_STRINGS) for batch in batches for n in ARROW_SCHEMA.names)


def test_check_part_reads_runs_of_row_groups_and_numbers_their_rows(tmp_path: Path) -> None:
    rows = _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:220]
    path = _write_parquet(tmp_path / "t.parquet", rows)  # row groups of 50: 0-49, 50-99, 100-149, 150-199, 200-219
    v = Validator()
    read.check_part(path, v, [])
    assert v == Validator()
    for groups, row in (([0, 2, 3], 100), ([0, 1, 3, 4], 150), ([1, 2], 50)):
        with pytest.raises(read.InputProblem) as e:
            read.check_part(path, Validator(), groups)
        assert str(e.value).startswith(f"{path} row {row}: "), (groups, str(e.value))
    read.check_part(path, v, [0, 1, 2])
    read.check_part(path, v, [3, 4])
    assert v.traces["t"].last_seq == 219


def test_parquet_data_that_breaks_mid_file_is_named_by_the_row_it_stopped_at(small_batches: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write_parquet(tmp_path / "t.parquet", _at_level(_example("conformant-5.3.3.jsonl"), Observation.FULL, "t")[:40])
    opened = pq.ParquetFile

    class BreaksAfterOneBatch:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.file = opened(*args, **kwargs)

        def iter_batches(self, **kwargs: Any) -> Iterator[pa.RecordBatch]:
            yield next(self.file.iter_batches(**kwargs))
            raise pa.ArrowInvalid("a page that does not decode")

    monkeypatch.setattr(pq, "ParquetFile", lambda *a, **k: BreaksAfterOneBatch(*a, **k) if "metadata" in k else opened(*a, **k))
    with pytest.raises(read.InputProblem) as e:
        read.check_part(path, Validator())
    assert str(e.value) == f"{path} row 16: unreadable Parquet data: a page that does not decode" and e.value.unreadable is None
