"""What each topic was told: the answers of a trace counted per topic and per kind of answer.

``python -m traces.reporting.outcomes PATH...`` prints, per trace, one row per (topic, answer), where the
answer is the remark's bracketed tag (``[TIMEOUT_CLEAN_QUEUE]``, ``[RateLimit]``, ...) or the
response code's name. It is the view an operator wants of source 004's retry storm: whether the
ordinary topics were failed along with the flooding one. Input is read and validated like
``flowspec check`` reads it (a bad record stops it with exit 2). Memory grows with the number of
requests of one trace (their topics are remembered until the end of the trace): for demo-sized
traces, not for the 100M-event datasets that ``flowspec check`` handles on Spark.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Sequence

from traces.format.answers import answer_tag
from traces.format.records import responses_from_record
from traces.format.read import Record, TraceInputError, read_records


def outcomes(records: Iterable[Record]) -> dict[str, Counter[tuple[str, str]]]:
    """trace id → Counter of (topic, answer)."""
    topics: dict[tuple[str, int], str] = {}
    counts: dict[str, Counter[tuple[str, str]]] = {}
    for record in records:
        data = record.data
        trace = str(data["trace_id"])
        if data.get("kind") == "RequestArrives":
            topics[(trace, int(data["request_id"]))] = str(data.get("topic") or "")
        for r in responses_from_record(data):
            topic = topics.get((trace, r.request_id), "?")
            counts.setdefault(trace, Counter())[(topic, answer_tag(r.code, r.remark))] += 1
    return counts


def table(counts: dict[str, Counter[tuple[str, str]]]) -> str:
    """The counts as a text table, one block per trace."""
    lines: list[str] = []
    for trace, c in sorted(counts.items()):
        lines.append(f"trace {trace}: answers by topic")
        for topic in sorted({t for t, _ in c}):
            total = sum(n for (t, _), n in c.items() if t == topic)
            parts = ", ".join(f"{tag} {n}" for (t, tag), n in sorted(c.items()) if t == topic)
            lines.append(f"  {topic or '(no topic)':<34} {total:>6} answers: {parts}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table for the traces at the given paths; exit 2 on unreadable input."""
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m traces.reporting.outcomes PATH...", file=sys.stderr)
        return 2
    try:
        print(table(outcomes(read_records(paths))))
    except TraceInputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
