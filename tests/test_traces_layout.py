"""Where each trace's rows are (traces.checking.layout), and that the rules pass judges a trace the same
wherever its rows are: one file, interleaved with another trace, or spread over files."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from traces.recording.examples import EXAMPLES
from traces.checking.layout import MAX_SPLIT_READING, Piece, Unit, pack, plan, read_unit, split
from traces.format.read import read_records
from traces.checking.rules import RULES
from traces.format.write import TraceWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Two traces of observation "full": one conformant, one that breaks a rule (so samples compare too).
FIRST, SECOND = "conformant-slow-disk.jsonl", "broken-fifo_service_per_queue.jsonl"


def _trace(name: str, trace_id: str) -> list[dict[str, Any]]:
    return [{**r.data, "trace_id": trace_id} for r in read_records([str(EXAMPLES / name)])]


def _interleaved(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Both traces' records alternating, each trace still in seq order."""
    out = [r for pair in zip(a, b) for r in pair]
    shorter = min(len(a), len(b))
    return out + list(a[shorter:]) + list(b[shorter:])


def _write(path: Path, records: Iterable[dict[str, Any]], row_group: int = 100_000, file_rows: int = 1_000_000) -> Path:
    with TraceWriter(path, row_group=row_group, file_rows=file_rows) as w:
        w.write_all(records)
    return path


def _seqs(unit: Unit) -> dict[str, list[int]]:
    table = read_unit(unit, ["trace_id", "seq"])
    out: dict[str, list[int]] = {}
    for t, s in zip(table.column("trace_id").to_pylist(), table.column("seq").to_pylist()):
        out.setdefault(t, []).append(s)
    return out


def test_traces_interleaved_in_one_row_group_share_one_piece(tmp_path: Path) -> None:
    a, b = _trace(FIRST, "a"), _trace(SECOND, "b")
    layout = plan([str(_write(tmp_path / "mixed", _interleaved(a, b)))])
    (piece,) = layout.pieces
    assert piece.row_group == 0 and piece.rows == len(a) + len(b)
    assert layout.trace_pieces == {"a": (piece,), "b": (piece,)}
    assert layout.units == (Unit((piece,)),)
    assert _seqs(layout.units[0]) == {"a": list(range(len(a))), "b": list(range(len(b)))}


def test_a_trace_over_several_files_and_row_groups_is_one_unit(tmp_path: Path) -> None:
    a, b = _trace(FIRST, "a"), _trace(SECOND, "b")
    spread = _write(tmp_path / "spread", a, row_group=50, file_rows=100)  # 2 row groups per file
    alone = _write(tmp_path / "alone", b, row_group=1000)
    layout = plan([str(spread), str(alone)])
    files = {p.path for p in layout.trace_pieces["a"]}
    assert len(files) == -(-len(a) // 100) and len(layout.trace_pieces["a"]) == -(-len(a) // 50)
    assert [p.row_group for p in layout.trace_pieces["a"][:4]] == [0, 1, 0, 1]
    assert layout.trace_pieces["b"] == (Piece(str(alone / "part-00000.parquet"), 0, len(b)),)
    assert {u.pieces for u in layout.units} == {layout.trace_pieces["a"], layout.trace_pieces["b"]}
    assert [u.rows for u in layout.units] == sorted((len(a), len(b)), reverse=True)
    (unit,) = [u for u in layout.units if u.pieces == layout.trace_pieces["a"]]
    assert _seqs(unit) == {"a": list(range(len(a)))}


def test_each_jsonl_file_is_one_piece(tmp_path: Path) -> None:
    first, second = EXAMPLES / FIRST, EXAMPLES / SECOND
    layout = plan([str(first), str(second)])
    lines = [len(f.read_text().splitlines()) for f in (first, second)]
    assert layout.pieces == (Piece(str(first), None, lines[0]), Piece(str(second), None, lines[1]))
    assert len(layout.units) == 2
    (unit,) = [u for u in layout.units if u.pieces == (layout.pieces[0],)]
    trace_id = next(read_records([str(first)])).data["trace_id"]
    assert _seqs(unit) == {trace_id: list(range(lines[0]))}
    assert layout.trace_pieces[trace_id] == (layout.pieces[0],)


def test_a_trace_from_jsonl_into_parquet_joins_them(tmp_path: Path) -> None:
    a, b, c = _trace(FIRST, "a"), _trace(SECOND, "b"), _trace("faults-5.3.3.jsonl", "c")
    half = len(a) // 2
    head = _write(tmp_path / "1-head.jsonl", a[:half])
    tail = _write(tmp_path / "2-tail", _interleaved(a[half:], b), row_group=100)
    other = _write(tmp_path / "3-other.jsonl", c)
    layout = plan([str(tmp_path)])
    assert [p.path for p in layout.trace_pieces["a"]][0] == str(head) and len(layout.trace_pieces["a"]) > 2
    joined, alone = sorted(layout.units, key=lambda u: len(u.pieces), reverse=True)
    assert alone.pieces == (Piece(str(other), None, len(c)),)
    assert joined.pieces[0].path == str(head) and {p.path for p in joined.pieces[1:]} == {str(f) for f in sorted(tail.glob("*.parquet"))}
    assert _seqs(joined) == {"a": list(range(len(a))), "b": list(range(len(b)))}


def _units(rows: Sequence[int]) -> list[Unit]:
    return [Unit((Piece(f"f{i}.parquet", 0, n),)) for i, n in enumerate(rows)]


@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=40), st.integers(1, 8), st.sampled_from([1, 5_000, 1_000_000]))
def test_packing_gives_every_core_work_and_never_splits_a_unit(rows: list[int], cores: int, min_rows: int) -> None:
    units = _units(rows)
    tasks = pack(units, cores, min_rows=min_rows)
    placed = [u for task in tasks for u in task]
    assert sorted(placed, key=id) == sorted(units, key=id) and len(placed) == len(units)  # each unit once, whole
    assert all(tasks) and min(len(units), cores) <= len(tasks) <= min(len(units), max(cores, 3 * cores))
    if len(tasks) > cores:  # more than one per core only while each task gets min_rows on average
        assert len(tasks) <= sum(rows) // min_rows
    loads = [sum(u.rows for u in task) for task in tasks]
    assert loads == sorted(loads, reverse=True)
    # Largest first into the lightest task: no task exceeds another by more than its last unit.
    assert max(loads) - min(loads) <= max(rows)


def test_a_few_tasks_per_core_when_there_are_units_and_rows() -> None:
    assert len(pack(_units([10] * 40), cores=2, min_rows=1)) == 6
    assert len(pack(_units([10] * 40), cores=2, min_rows=100)) == 4  # 400 rows: 4 tasks of 100
    assert len(pack(_units([10] * 40), cores=2, min_rows=1_000)) == 2  # too few rows: one task per core
    assert len(pack(_units([10]), cores=2, min_rows=1)) == 1  # one unit cannot be split


def test_rules_judge_a_trace_the_same_wherever_its_rows_are(spark: SparkSession, tmp_path: Path) -> None:
    """The same two traces as one Parquet file each, spread over two files, and interleaved in
    one row group: the same findings, samples and raw records (but for the trace id)."""
    from traces.checking.check import run_check

    where = {
        "whole": lambda a, b: [_write(tmp_path / "whole-a", a), _write(tmp_path / "whole-b", b)],
        "spread": lambda a, b: [_write(tmp_path / "spread-a", a, row_group=60, file_rows=120), _write(tmp_path / "spread-b", b)],
        "mixed": lambda a, b: [_write(tmp_path / "mixed", _interleaved(a, b))],
    }
    paths = [str(p) for name, write in where.items() for p in write(_trace(FIRST, f"{name}-a"), _trace(SECOND, f"{name}-b"))]
    layout = plan(paths)
    assert len({p.path for p in layout.trace_pieces["spread-a"]}) >= 2 and len(layout.units) == 5  # whole-a, whole-b, spread-a, spread-b, mixed
    # A trace of nothing but clock steps: the scans read none of its rows, yet it is counted and judged.
    header, *events = _trace(FIRST, "quiet-c")
    clock = [{**r, "seq": i} for i, r in enumerate((r for r in events if r["kind"] == "ClockAdvances"), start=1)]
    paths.append(str(_write(tmp_path / "quiet", [header, *clock])))
    result = run_check(spark, paths, replay=False)
    found: dict[str, Any] = {}
    for t in result.traces:
        name, which = t.trace_id.split("-")
        found.setdefault(name, {})[which] = [
            (f["rule"], f["status"], f["checked"], f["violations"], [(s["seq"], s["detail"], s["raw"].replace(t.trace_id, "T")) for s in f["sample"]])
            for f in t.findings
        ]
    assert found["spread"] == found["whole"] and found["mixed"] == found["whole"]
    assert {f[0]: f[1] for f in found["quiet"]["c"]} == {r.name: "inconclusive" for r in RULES if r.body == "frame"}
    b = dict((f[0], f) for f in found["whole"]["b"])["fifo_service_per_queue"]
    assert b[1] == "violation" and b[4] and all('"seq":' in raw for _, _, raw in b[4])
    assert sum(result.kinds.values()) == 3 * (len(_trace(FIRST, "x")) + len(_trace(SECOND, "x")) - 2) + len(clock)  # every event, no header


def _back_to_back(tmp_path: Path, row_group: int) -> tuple[Path, list[list[dict[str, Any]]]]:
    """Five traces written one after another, in row groups that straddle the trace boundaries."""
    names = [FIRST, SECOND, "faults-5.3.3.jsonl", FIRST, SECOND]
    traces = [_trace(name, f"t{i}") for i, name in enumerate(names)]
    return _write(tmp_path / "back-to-back", [r for t in traces for r in t], row_group=row_group), traces


def test_traces_back_to_back_across_row_groups_are_split_into_runs_of_whole_traces(tmp_path: Path) -> None:
    path, traces = _back_to_back(tmp_path, row_group=40)
    layout = plan([str(path)])
    (unit,) = layout.units  # every row group shares a trace with the next
    runs = split(unit, layout.trace_pieces, target_rows=unit.rows // 3)
    assert len(runs) >= 3 and all(r.traces for r in runs)
    assert sorted(t for r in runs for t in r.traces or ()) == sorted(layout.trace_pieces)  # each trace in one run
    for run in runs:
        assert _seqs(run) == {t: list(range(len(traces[int(t[1:])]))) for t in run.traces or ()}  # whole, in order, nothing else
        assert {p for t in run.traces or () for p in layout.trace_pieces[t]} == set(run.pieces)
    assert sum(r.rows for r in runs) <= MAX_SPLIT_READING * unit.rows
    assert split(unit, layout.trace_pieces, target_rows=unit.rows) == [unit]
    # Coverage-only reads (no trace_id column asked for) still leave the neighbours' rows out.
    assert sum(read_unit(r, ["kind"]).num_rows for r in runs) == unit.rows


def test_traces_judged_one_at_a_time_are_read_in_runs_of_about_a_piece(tmp_path: Path) -> None:
    """The partial replay's tasks (Layout.runs) over short traces written back to back, several to
    a row group: each trace asked for in exactly one run, whole and in order; a run reads at most
    two pieces, so a piece is read about twice, where a task a trace read it once for each trace
    it holds; with more cores, more runs."""
    traces = [_trace(FIRST, f"t{i}")[:30] for i in range(60)]
    layout = plan([str(_write(tmp_path / "short", [r for t in traces for r in t], row_group=100))])
    asked = [f"t{i}" for i in range(60) if i != 5]  # t5 is not asked for (a full trace, judged elsewhere)
    runs = layout.runs(reversed(asked), cores=1)
    assert sorted(t for r in runs for t in r.traces or ()) == sorted(asked)
    for run in runs:
        assert _seqs(run) == {t: list(range(30)) for t in run.traces or ()}
        assert run.rows <= 2 * max(p.rows for p in layout.pieces)
    firsts = [min(int(t[1:]) for t in r.traces or ()) for r in runs]
    assert firsts == sorted(firsts)  # input order
    read = sum(r.rows for r in runs)
    assert read <= 2 * sum(p.rows for p in layout.pieces) < sum(p.rows for t in asked for p in layout.trace_pieces[t])
    assert max(len(r.traces or ()) for r in runs) <= 8  # one core: at most 59 traces / 8 runs a run
    assert len(layout.runs(asked, cores=8)) == len(asked)  # eight cores: 64 runs wanted, one trace each
    assert layout.runs([], cores=2) == []


def test_interleaved_traces_are_not_split_when_every_run_would_read_everything(tmp_path: Path) -> None:
    a, b = _trace(FIRST, "a"), _trace(SECOND, "b")
    layout = plan([str(_write(tmp_path / "mixed", _interleaved(a, b), row_group=20))])
    (unit,) = layout.units
    assert split(unit, layout.trace_pieces, target_rows=unit.rows // 4) == [unit]


def test_rules_judge_traces_split_into_runs_as_they_judge_them_whole(spark: SparkSession, tmp_path: Path, monkeypatch: Any) -> None:
    from traces.checking import layout as layout_module
    from traces.checking.check import run_check

    path, _ = _back_to_back(tmp_path, row_group=40)
    whole = run_check(spark, [str(path)], replay=False)
    monkeypatch.setattr(layout_module, "MIN_TASK_ROWS", 1)
    monkeypatch.setattr(layout_module, "MAX_UNIT_ROWS", 100)
    assert len(plan([str(path)]).tasks(2)) >= 2
    runs = run_check(spark, [str(path)], replay=False)
    assert runs.traces == whole.traces and runs.kinds == whole.kinds and runs.rule_totals == whole.rule_totals


def test_pieces_name_their_files_by_absolute_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Spark executor opens a piece from its own working directory: a path relative to the driver's would miss."""
    monkeypatch.chdir(EXAMPLES.parent)
    layout = plan([f"{EXAMPLES.name}/{FIRST}"])
    assert [p.path for p in layout.pieces] == [str(EXAMPLES / FIRST)]
