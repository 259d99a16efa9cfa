"""Generated parts of docs/trace-format.md: the table of event kinds, fields and observation levels.

``python -m traces.docs`` rewrites the text between the ``<!-- kinds:begin -->`` and
``<!-- kinds:end -->`` markers; a test checks the file is up to date.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from traces.format import KIND_FIELDS, KINDS, LEVEL_KINDS, RESPONSE_KIND, Observation

DOC = Path(__file__).resolve().parent.parent / "docs" / "trace-format.md"
BEGIN, END = "<!-- kinds:begin -->", "<!-- kinds:end -->"


def _level(kind: str) -> str:
    for level in (Observation.BLACK_BOX, Observation.QUEUES, Observation.FULL):
        if kind in LEVEL_KINDS[level]:
            return str(level.value)
    raise AssertionError(kind)


def kinds_table() -> str:
    """The Markdown table of every event kind."""
    rows = ["| kind | fields (besides trace_id, seq, ts, responses) | lowest level | what happened |", "|---|---|---|---|"]
    for name in [*KINDS, RESPONSE_KIND]:
        types = {f.name: str(f.type) for f in dataclasses.fields(KINDS[name])} if name in KINDS else {}
        fields = ", ".join(f"`{f}`: {types.get(f, 'int (opaque)')}" for f in KIND_FIELDS[name]) or "—"
        doc = (KINDS[name].__doc__ or "").splitlines()[0] if name in KINDS else "a response seen on the wire, with no internal step (black-box)"
        rows.append(f"| `{name}` | {fields} | {_level(name)} | {doc.replace('|', '/')} |")
    return "\n".join(rows)


def render(text: str) -> str:
    """``text`` with the generated table replaced."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{kinds_table()}\n{END}{tail}"


def main() -> int:
    """Rewrite the generated part of docs/trace-format.md."""
    DOC.write_text(render(DOC.read_text()))
    print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
