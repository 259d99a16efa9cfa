"""Where each trace's rows are, and how to hand whole traces to Spark tasks without a shuffle.

The per-trace passes, validation first (:mod:`traces.checking.validation`), need every row of a
trace in one task. Instead of shuffling rows by trace id, the driver looks at the input once (only
the ``trace_id`` column of each Parquet row group, dictionary-encoded, and the row counts in the
file footers; a JSON Lines file's ``trace_id`` of each line, which has no footer) and builds:

- *pieces*: a Parquet row group, or a whole JSON Lines file (a JSON Lines file cannot be read
  from the middle, so it is one indivisible piece);
- *units*: the connected components of pieces that share a trace (union-find), so a unit holds
  whole traces and a trace never leaves its unit; a trace written across row groups or files
  joins them into one unit;
- *runs*: a unit of several traces bigger than a task's share is read as runs of its whole
  traces in input order (:func:`split`): traces written back to back across row-group
  boundaries form one component, which would otherwise occupy one core and all its memory; the
  partial replay, which judges a trace at a time, takes its traces in runs of about a piece's
  traces (:meth:`Layout.runs`);
- *tasks*: units packed by row count, largest first, each into the lightest task; enough tasks
  for every core, a few per core when there are enough units and rows (Spark hands the next
  task to the first free core, so equal tasks in a small multiple of the cores keep every core
  busy to the end; but each task has a fixed cost, see :data:`MIN_TASK_ROWS`), never a unit split.

The input need not be valid yet: a file whose trace ids cannot be read gets no piece, and
:attr:`Layout.unread` says why; validation reads it whole and names its problem.

A task then reads its own pieces (:func:`read_unit`) in the executor. So every executor must be
able to open the input's locations (:mod:`traces.format.storage`): local files with ``--master
local[N]`` or a file system that all nodes mount at the same path; or an object store or
distributed file system by URI (``s3://``, ``hdfs://``, …). A piece a task cannot open is
:class:`~traces.checking.exits.UnreadableInput`, naming the piece's file and the task's node.

:attr:`Layout.trace_pieces` also says, per trace, which pieces hold it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pyarrow.parquet as pq

from traces.checking.exits import unreadable_here
from traces.format.records import ARROW_SCHEMA
from traces.format.read import MAX_LINE_BYTES, raw_records, resolve
from traces.format.storage import first_line, open_input, suffix

#: Rows above which a unit of several traces is read as runs of whole traces (:func:`split`): a
#: task holds a unit's rows in memory, and one unit occupies one core.
MAX_UNIT_ROWS = 2_000_000
#: A split is kept only if its runs read at most this many times the unit's rows (traces that
#: interleave over many row groups would make every run read them all).
MAX_SPLIT_READING = 1.5
#: Tasks per core when there are enough units and rows: the last tasks to finish are then short.
TASKS_PER_CORE = 3
#: Runs a core for tasks that judge a trace at a time (:meth:`Layout.runs`): the partial replay's
#: cost per trace varies widely (at black-box a trace may take its whole time budget), so more,
#: smaller runs than :data:`TASKS_PER_CORE` keep every core busy to the end; a run still reads its
#: pieces once for all its traces.
RUNS_PER_CORE = 8
#: Rows below which one more task is not worth it: on local[2] here, each Spark task costs about
#: 50 ms besides its work (6 tasks that do nothing take 0.45 s, 2 take 0.2 s), a twentieth of the
#: ~0.5 s a core spends judging 500 000 rows.
MIN_TASK_ROWS = 500_000


@dataclass(frozen=True)
class Piece:
    """The smallest readable part of the input: one Parquet row group, or one JSON Lines file."""

    path: str  # the file's location: an absolute local path, or a URI
    row_group: int | None  # None: a JSON Lines file, read whole
    rows: int  # records in the piece, headers included


@dataclass(frozen=True)
class Unit:
    """Pieces that hold every row of some whole traces: the traces it judges."""

    pieces: tuple[Piece, ...]  # in input order (files in name order, row groups in file order)
    # The traces judged; None: every trace in the pieces (a connected component, see :func:`plan`).
    # Otherwise a run cut from a component (:func:`split`), whose first and last pieces may also
    # hold rows of its neighbours' traces, which the reader leaves out.
    traces: frozenset[str] | None = None

    @property
    def rows(self) -> int:
        """Rows read (a run's shared pieces count whole)."""
        return sum(p.rows for p in self.pieces)


@dataclass(frozen=True)
class Layout:
    """The input's pieces, which traces each holds, and the units they form."""

    pieces: tuple[Piece, ...]  # in input order
    trace_pieces: Mapping[str, tuple[Piece, ...]]  # trace id -> the pieces holding its rows, in input order
    units: tuple[Unit, ...]  # largest first
    files: tuple[str, ...] = ()  # every file of the input, in input order, with pieces or not
    # The files whose trace ids could not be read, and why: not valid traces (validation says
    # where), or not readable from the driver; they have no pieces.
    unread: Mapping[str, str] = field(default_factory=dict)

    def tasks(self, cores: int) -> list[tuple[Unit, ...]]:
        """The units, large ones split into runs (:func:`split`), packed into Spark tasks (:func:`pack`)."""
        total = sum(u.rows for u in self.units)
        target = min(MAX_UNIT_ROWS, max(MIN_TASK_ROWS, total // max(1, cores * TASKS_PER_CORE)))
        return pack([run for unit in self.units for run in split(unit, self.trace_pieces, target)], cores)

    def runs(self, trace_ids: Iterable[str], cores: int) -> list[Unit]:
        """``trace_ids`` as runs of whole traces for tasks that judge one trace at a time (the
        partial replay), in input order. A run reads at most two pieces' rows, so that the traces
        that start in a piece share a run with the one that crosses into the next, and each piece
        is read about twice; a task a trace read a piece once for each trace it holds (a row group
        of 100,000 rows holding six traces, six times). A run holds at most the share of the traces
        that leaves RUNS_PER_CORE runs a core, so that a few pieces of many traces, or traces of
        very different cost, still keep every core busy."""
        position = {piece: i for i, piece in enumerate(self.pieces)}
        wanted = list(trace_ids)
        if not wanted:
            return []
        most = -(-len(wanted) // max(1, cores * RUNS_PER_CORE))
        members = _in_input_order(wanted, self.trace_pieces, position)
        return _runs(members, self.trace_pieces, position, 2 * max(p.rows for p in self.pieces), most)


def _parquet_pieces(source: str) -> list[tuple[Piece, list[str]]]:
    """Each row group of a Parquet file with the trace ids it holds (only ``trace_id`` is read)."""
    with open_input(source) as file:
        pf = pq.ParquetFile(file, read_dictionary=["trace_id"])
        out = []
        for i in range(pf.metadata.num_row_groups):
            ids: set[str] = set()
            for chunk in pf.read_row_group(i, columns=["trace_id"]).column(0).chunks:
                present = np.asarray(pc.drop_null(chunk.indices).to_numpy())  # a null trace_id is validation's to name
                used = np.flatnonzero(np.bincount(present, minlength=len(chunk.dictionary)))
                ids.update(chunk.dictionary.take(pa.array(used, pa.int64())).to_pylist())
            out.append((Piece(source, i, pf.metadata.row_group(i).num_rows), sorted(ids)))
    return out


def _jsonl_piece(source: str) -> tuple[Piece, list[str]]:
    """A JSON Lines file as one piece with its trace ids (only ``trace_id`` is kept from each line)."""
    with open_input(source) as file:
        table = pj.read_json(
            file,
            read_options=pj.ReadOptions(block_size=2 * MAX_LINE_BYTES),  # a block must hold the longest line
            # A line without a trace id is validation's to name: nullable here.
            parse_options=pj.ParseOptions(explicit_schema=pa.schema([ARROW_SCHEMA.field("trace_id").with_nullable(True)]), unexpected_field_behavior="ignore"),
        )
    return Piece(source, None, table.num_rows), sorted(pc.unique(table.column("trace_id")).drop_null().to_pylist())


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]  # path halving
        i = parent[i]
    return i


def plan(paths: Sequence[str]) -> Layout:
    """The layout of the input named by ``paths``. Pieces name their files by location (an absolute
    path or a URI): Spark's executors open them from their own working directory, not the driver's.

    The input need not be valid yet: a file whose trace ids cannot be read (not Parquet, a line
    that is not JSON, a file the driver cannot open) gets no pieces and is listed in
    :attr:`Layout.unread`, for validation to say what is wrong with it."""
    found: list[tuple[Piece, list[str]]] = []
    files = resolve(paths)
    unread: dict[str, str] = {}
    for source in files:
        try:
            found += _parquet_pieces(source) if suffix(source) == ".parquet" else [_jsonl_piece(source)]
        except (OSError, pa.ArrowException) as e:
            unread[source] = first_line(e)
    pieces = tuple(p for p, _ in found)
    holders: dict[str, list[int]] = {}
    for index, (_, ids) in enumerate(found):
        for trace_id in ids:
            holders.setdefault(trace_id, []).append(index)
    parent = list(range(len(pieces)))
    for indexes in holders.values():
        root = _find(parent, indexes[0])
        for other in indexes[1:]:
            parent[_find(parent, other)] = root
    components: dict[int, list[Piece]] = {}
    for index, piece in enumerate(pieces):
        components.setdefault(_find(parent, index), []).append(piece)
    units = sorted((Unit(tuple(c)) for c in components.values()), key=lambda u: -u.rows)
    trace_pieces = {t: tuple(pieces[i] for i in indexes) for t, indexes in holders.items()}
    return Layout(pieces, trace_pieces, tuple(units), tuple(files), unread)


def split(unit: Unit, trace_pieces: Mapping[str, tuple[Piece, ...]], target_rows: int) -> list[Unit]:
    """A unit bigger than ``target_rows`` as runs of its whole traces, in input order, each reading
    about ``target_rows`` rows; the unit itself if it holds one trace, or if the runs would read
    more than MAX_SPLIT_READING times its rows.

    A component joins every trace written back to back across row-group boundaries (as
    ``flowspec record --traces N`` writes them) into one unit, which would occupy one core and
    be held whole in memory. A run reads its traces' pieces, so a row group where one trace ends
    and the next begins is read by both runs, and each keeps its own traces' rows."""
    if unit.rows <= target_rows or unit.traces is not None:
        return [unit]
    position = {piece: i for i, piece in enumerate(unit.pieces)}
    members = _in_input_order((t for t, pieces in trace_pieces.items() if pieces[0] in position), trace_pieces, position)
    if len(members) < 2:
        return [unit]
    runs = _runs(members, trace_pieces, position, target_rows)
    if len(runs) == 1 or sum(r.rows for r in runs) > MAX_SPLIT_READING * unit.rows:
        return [unit]
    return runs


def _in_input_order(traces: Iterable[str], trace_pieces: Mapping[str, tuple[Piece, ...]], position: Mapping[Piece, int]) -> list[str]:
    """``traces`` by where their rows start, then end (``position``: each piece's place in the input), then id."""
    return sorted(traces, key=lambda t: (position[trace_pieces[t][0]], position[trace_pieces[t][-1]], t))


def _runs(
    members: Sequence[str], trace_pieces: Mapping[str, tuple[Piece, ...]], position: Mapping[Piece, int], target_rows: int, most: int | None = None
) -> list[Unit]:
    """``members`` (in input order) cut into runs of whole traces, each reading about
    ``target_rows`` rows and holding at most ``most`` traces (at least one trace a run, however
    many rows it reads)."""
    runs: list[Unit] = []
    traces: list[str] = []
    pieces: set[Piece] = set()
    for trace_id in members:
        more = set(trace_pieces[trace_id]) - pieces
        full = most is not None and len(traces) >= most
        if traces and (full or sum(p.rows for p in pieces) + sum(p.rows for p in more) > target_rows):
            runs.append(Unit(tuple(sorted(pieces, key=position.__getitem__)), frozenset(traces)))
            traces, pieces, more = [], set(), set(trace_pieces[trace_id])
        traces.append(trace_id)
        pieces |= more
    runs.append(Unit(tuple(sorted(pieces, key=position.__getitem__)), frozenset(traces)))
    return runs


def pack(units: Sequence[Unit], cores: int, per_core: int = TASKS_PER_CORE, min_rows: int = MIN_TASK_ROWS) -> list[tuple[Unit, ...]]:
    """Units into tasks balanced by rows: one per core, up to ``per_core`` per core while each task
    gets ``min_rows`` rows on average, never more tasks than units. Largest unit first, each into
    the task with the fewest rows so far (ties: the lower task). Tasks come largest first."""
    rows = sum(u.rows for u in units)
    count = min(len(units), max(1, cores, min(per_core * cores, rows // max(min_rows, 1))))
    heap = [(0, t) for t in range(count)]
    tasks: list[list[Unit]] = [[] for _ in range(count)]
    for unit in sorted(units, key=lambda u: -u.rows):
        rows, t = heapq.heappop(heap)
        tasks[t].append(unit)
        heapq.heappush(heap, (rows + unit.rows, t))
    return sorted((tuple(t) for t in tasks), key=lambda t: -sum(u.rows for u in t))


def read_unit(unit: Unit, columns: Sequence[str], dictionary: Sequence[str] = ()) -> pa.Table:
    """The rows of ``unit``'s traces in input order, only ``columns`` (Arrow types of ``ARROW_SCHEMA``,
    but the string columns named in ``dictionary`` dictionary-encoded: Parquet stores repeated
    strings that way, so they are read without hashing every value again).

    Parquet row groups are read with pyarrow, all the unit's row groups of one file at once; a
    JSON Lines file with the project's reader (the input is already validated). A run's rows of
    other traces are left out."""
    read = [*columns, "trace_id"] if unit.traces is not None and "trace_id" not in columns else list(columns)
    plain = pa.schema([ARROW_SCHEMA.field(c) for c in read])
    encoded = [c for c in read if c in dictionary]
    schema = pa.schema([f.with_type(pa.dictionary(pa.int32(), f.type)) if f.name in encoded else f for f in plain])
    parts = []
    for source, group in groupby(unit.pieces, key=lambda p: p.path):  # a file's pieces are adjacent
        row_groups = [p.row_group for p in group if p.row_group is not None]
        with unreadable_here(source):
            if row_groups:
                with open_input(source) as file:
                    parquet = pq.ParquetFile(file, read_dictionary=encoded)
                    parts.append(parquet.read_row_groups(row_groups, columns=read).cast(schema))
            else:
                parts.append(_read_jsonl(source, plain).cast(schema))
    table = pa.concat_tables(parts) if parts else schema.empty_table()
    if unit.traces is None:
        return table
    mine = pc.is_in(table.column("trace_id"), value_set=pa.array(sorted(unit.traces), pa.string()))
    return table.filter(mine).select(list(columns))


def _read_jsonl(source: str, schema: pa.Schema) -> pa.Table:
    names = schema.names
    rows: list[dict[str, Any]] = [{n: record.get(n) for n in names} for _, record in raw_records(source)]
    return pa.Table.from_pylist(rows, schema=schema)
