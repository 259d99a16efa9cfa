"""Where traces are stored: local files, or any file system pyarrow supports, named by URI.

Traces are named by a *location*: a local path, made absolute (Spark's tasks open it from their
own working directory, not the driver's), or a URI that :meth:`pyarrow.fs.FileSystem.from_uri`
opens: ``s3://bucket/prefix``, ``gs://``, ``hdfs://``, ``abfs://``; ``file:///abs/path`` is a
local path. The driver and every task open the same location.

S3 and compatible stores take their endpoint, region and credentials from the AWS SDK's usual
environment variables (``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``) or from pyarrow's options in the URI's query
(``s3://bucket/prefix?endpoint_override=host:9000&scheme=http``), which every file found under
it keeps.
"""

from __future__ import annotations

import glob
import os
from pathlib import PurePosixPath

import pyarrow as pa
import pyarrow.fs as pafs

#: The files a directory is searched for.
TRACE_SUFFIXES = (".jsonl", ".json", ".parquet")
_LOCAL = pafs.LocalFileSystem()


def location(path: str) -> str:
    """``path`` as every node names it: a local path (or ``file://`` URI) as an absolute path, another URI as given."""
    path = path.removeprefix("file://")
    return path if "://" in path else os.path.abspath(path)


def suffix(where: str) -> str:
    """The file name's suffix of a location (a URI's query left out): ``.jsonl``, ``.parquet``, …"""
    return PurePosixPath(where.partition("?")[0]).suffix


def filesystem(where: str) -> tuple[pafs.FileSystem, str]:
    """The file system holding a location, and the location's path in it (raises OSError or
    pyarrow.ArrowInvalid if it cannot be reached or the scheme is unknown)."""
    if "://" not in where:
        return _LOCAL, where
    fs, path = pafs.FileSystem.from_uri(where)
    return fs, path


def trace_files(path: str) -> list[str] | None:
    """The trace files ``path`` names, as locations: a file; a directory's ``*.jsonl``, ``*.json``
    and ``*.parquet`` files, searched recursively, in name order; a local glob's matches. None if
    it names nothing."""
    if "://" not in path and any(c in path for c in "*?["):
        matches = sorted(glob.glob(path, recursive=True))
        return [f for m in matches for f in trace_files(m) or []] if matches else None
    where = location(path)
    fs, root = filesystem(where)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        return None
    if info.type != pafs.FileType.Directory:
        return [where]
    prefix = len(root.rstrip("/")) + 1
    found = [
        joined(where, f.path[prefix:])
        for f in fs.get_file_info(pafs.FileSelector(root, recursive=True))
        if f.type == pafs.FileType.File and suffix(f.path) in TRACE_SUFFIXES
    ]
    return sorted(found, key=lambda f: f.split("/"))


def joined(where: str, name: str) -> str:
    """The location of ``name`` (a relative path) in the directory ``where``; a URI's query is kept."""
    base, mark, query = where.partition("?")
    return f"{base.rstrip('/')}/{name}{mark}{query}"


def open_input(where: str) -> pa.NativeFile:
    """A location opened for random access (Parquet; JSON Lines read whole)."""
    fs, path = filesystem(where)
    return fs.open_input_file(path)


def open_output(where: str) -> pa.NativeFile:
    """A location opened for writing, its directory made first."""
    fs, path = filesystem(where)
    fs.create_dir(str(PurePosixPath(path).parent), recursive=True)
    return fs.open_output_stream(path, buffer_size=1 << 20)


def make_dir(where: str) -> None:
    """Make the directory ``where`` (with its parents) if the file system has directories."""
    fs, path = filesystem(where)
    fs.create_dir(path, recursive=True)


def remove_files(where: str, pattern: str) -> None:
    """Delete the files directly under the directory ``where`` whose names match ``pattern``."""
    fs, root = filesystem(where)
    for f in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
        if f.type == pafs.FileType.File and PurePosixPath(f.path).match(pattern):
            fs.delete_file(f.path)


def first_line(error: BaseException) -> str:
    """An error's message as one line (pyarrow's can run to dozens: every libjvm it tried, say)."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
