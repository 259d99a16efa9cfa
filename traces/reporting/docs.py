"""Generated parts of docs/trace-format.md: the tables of event kinds and of rules.

``python -m traces.reporting.docs`` rewrites the text between the ``<!-- kinds:begin -->`` /
``<!-- kinds:end -->`` and ``<!-- rules:begin -->`` / ``<!-- rules:end -->`` markers; a test
checks the file is up to date.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from traces.format.records import KIND_FIELDS, KINDS, LEVEL_KINDS, RESPONSE_KIND, Observation
from traces.checking.rules import RULES

DOC = Path(__file__).resolve().parents[2] / "docs" / "trace-format.md"
MARKERS = ("kinds", "rules")


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
        if "code" in types:
            types["code"] = "int (any Java int: the release's processor table routes it)"
        fields = ", ".join(f"`{f}`: {types.get(f, 'int (opaque)')}" for f in KIND_FIELDS[name]) or "—"
        doc = (KINDS[name].__doc__ or "").splitlines()[0] if name in KINDS else "a response seen on the wire, with no internal step (black-box)"
        rows.append(f"| `{name}` | {fields} | {_level(name)} | {doc.replace('|', '/')} |")
    return "\n".join(rows)


def rules_table() -> str:
    """The Markdown table of every rule."""
    rows = ["| rule (a claim) | level | body | description | source |", "|---|---|---|---|---|"]
    for r in RULES:
        rows.append(f"| `{r.name}` | {r.level.value} | {r.body} | {r.description} | {r.source} |")
    return "\n".join(rows)


def render(text: str) -> str:
    """``text`` with the generated tables replaced."""
    tables = {"kinds": kinds_table(), "rules": rules_table()}
    for name in MARKERS:
        begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{tables[name]}\n{end}{tail}"
    return text


def main() -> int:
    """Rewrite the generated part of docs/trace-format.md."""
    DOC.write_text(render(DOC.read_text()))
    print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
