"""Streaming trace writers: JSON Lines, or a Parquet dataset of several row groups and files.

Memory stays bounded: records are buffered up to one row group, then written. A Parquet
dataset is split into several row groups and files because Spark scans one row group with one
core. The output is a local path or a URI of any file system pyarrow supports
(:mod:`traces.format.storage`: ``s3://bucket/prefix``, …).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from traces.format.records import ARROW_SCHEMA, OBJECT_HEADER_COLUMNS
from traces.format.storage import filesystem, joined, location, make_dir, open_output, remove_files, suffix

DEFAULT_ROW_GROUP = 100_000
DEFAULT_FILE_ROWS = 1_000_000


def parquet_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record with the header's objects as JSON text, as their Parquet columns hold them."""
    return {**record, **{name: json.dumps(value) for name in OBJECT_HEADER_COLUMNS if isinstance(value := record.get(name), dict)}}


class TraceWriter:
    """Writes records to ``path``: ``*.jsonl`` (one file) or a directory of ``part-NNNNN.parquet`` files."""

    def __init__(self, path: str | Path, row_group: int = DEFAULT_ROW_GROUP, file_rows: int = DEFAULT_FILE_ROWS) -> None:
        self.path = location(str(path))
        self.parquet = suffix(self.path) not in (".jsonl", ".json")
        self.row_group = row_group
        self.file_rows = file_rows
        self.rows_written = 0
        self._buffer: list[dict[str, Any]] = []
        self._text: pa.NativeFile | None = None
        self._parquet: pq.ParquetWriter | None = None
        self._file_index = 0
        self._rows_in_file = 0
        if self.parquet:
            make_dir(self.path)
            remove_files(self.path, "part-*.parquet")
        else:
            self._text = open_output(self.path)

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record."""
        self.rows_written += 1
        if self._text is not None:
            self._text.write((json.dumps(record, separators=(",", ":")) + "\n").encode())
            return
        self._buffer.append(parquet_row(record))
        if len(self._buffer) >= self.row_group:
            self._flush()

    def write_all(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Append every record."""
        for r in records:
            self.write(r)

    def _flush(self) -> None:
        if not self._buffer:
            return
        if self._parquet is None or self._rows_in_file >= self.file_rows:
            if self._parquet is not None:
                self._parquet.close()
            fs, part = filesystem(joined(self.path, f"part-{self._file_index:05d}.parquet"))
            self._parquet = pq.ParquetWriter(part, ARROW_SCHEMA, filesystem=fs, compression="zstd")
            self._file_index += 1
            self._rows_in_file = 0
        table = pa.Table.from_pylist(self._buffer, schema=ARROW_SCHEMA)
        self._parquet.write_table(table, row_group_size=self.row_group)
        self._rows_in_file += len(self._buffer)
        self._buffer = []

    def close(self) -> None:
        """Flush and close."""
        if self._text is not None:
            self._text.close()
            self._text = None
        self._flush()
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
