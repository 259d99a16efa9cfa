"""The outputs of ``flowspec check``: a console table, a JSON document and an HTML page.

The HTML page is self-contained (inline SVG drawn here, one small inline script that sorts the
summary table, nothing loaded from the network). It opens with the totals, the rules and a
table of every trace (verdict, events, answers by kind, first finding), then a section for each
trace that matters: queue depth per queue, lock hold time against the busy threshold, free pool
buffers and answers by kind over time, answers per topic, then every violation with the events
around it (the check reads them when it writes a report: :mod:`traces.checking.context`). A
trace matters when it is not conformant or shows a known defect of its release; with few traces (``REPORT_SECTIONS``) every trace has its section, so that a report of thousands of
conformant traces stays a table.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from xml.etree import ElementTree
from dataclasses import asdict
from typing import Any

from traces.checking.check import KNOWN_DEFECT, KNOWN_DEFECT_DETAIL, REPLAY, CheckResult, TraceVerdict
from traces.format.records import KINDS, RESPONSE_KIND
from traces.checking.rules import RULES

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#393b79", "#637939")
#: Series that keep one colour in every chart of every trace, so charts can be compared at a glance.
FIXED_COLOURS = {
    "SUCCESS": "#2ca02c",
    "[REJECTREQUEST]": "#d62728",
    "[OVERLOAD]": "#8b0000",
    "[PC_SYNCHRONIZED]": "#e377c2",
    "[PCBUSY_CLEAN_QUEUE]": "#ff7f0e",
    "[TIMEOUT_CLEAN_QUEUE]": "#bcbd22",
    "[RateLimit]": "#17becf",
    "SYSTEM_ERROR": "#7f7f7f",
    "REQUEST_CODE_NOT_SUPPORTED": "#9467bd",
    "send": "#1f77b4",
}


def coverage(result: CheckResult) -> dict[str, Any]:
    """Which actions and rules the traces exercised."""
    kinds = [*KINDS, RESPONSE_KIND]
    exercised_rules = sorted(
        r for r, statuses in result.rule_totals.items() if statuses.get("pass") or statuses.get("violation") or statuses.get(KNOWN_DEFECT)
    )
    return {
        "actions_seen": {k: result.kinds.get(k, 0) for k in kinds},
        "actions_missing": [k for k in kinds if not result.kinds.get(k) and k != RESPONSE_KIND],
        "rules_exercised": exercised_rules,
        "rules_not_exercised": [r.name for r in RULES if r.name not in exercised_rules],
    }


def to_json(result: CheckResult) -> dict[str, Any]:
    """The whole result as plain data (``--json``)."""
    totals = {v: sum(1 for t in result.traces if t.verdict == v) for v in ("conformant", "violation", "inconclusive")}
    known = sum(1 for t in result.traces if any(_shows_known_defect(f) for f in t.findings))
    return {
        "totals": {"traces": len(result.traces), **totals, "with_known_defects": known, "events": sum(t.events for t in result.traces)},
        "traces": [{k: v for k, v in asdict(t).items() if k != "series"} for t in result.traces],
        "rules": result.rule_totals,
        "coverage": coverage(result),
        "exit_code": result.exit_code,
    }


#: Up to this many traces, the console prints each trace's table without ``--verbose``.
DETAIL_TRACES = 3
#: The console lists at most this many violating traces, each with its first finding.
LISTED_VIOLATIONS = 20
#: Up to this many traces, the HTML report has a section for every trace, not only those that matter.
REPORT_SECTIONS = 20


def _shows_known_defect(finding: Mapping[str, Any]) -> bool:
    """A rule reported a known defect, or the replay found a claim the release itself breaks."""
    return finding["status"] == KNOWN_DEFECT or (
        finding["rule"] == REPLAY and any(s["detail"].startswith(KNOWN_DEFECT_DETAIL) for s in finding["sample"])
    )


def console(result: CheckResult, verbose: bool = False) -> str:
    """The summary first (traces by verdict, each rule's totals, the violating traces each with its
    first finding, why traces were inconclusive); each trace's table only with ``verbose`` or for
    a handful of traces."""
    data = to_json(result)
    tot = data["totals"]
    lines = [
        f"{tot['traces']} traces, {tot['events']} events: {tot['conformant']} conformant, "
        f"{tot['violation']} violation, {tot['inconclusive']} inconclusive (exit {result.exit_code}); "
        f"{tot['with_known_defects']} show a known defect of their release",
        f"  {'rule (traces)':<52} {'pass':>7} {'broken':>7} {'known':>7} {'incon.':>7}",
    ]
    for name in [REPLAY, *(r.name for r in RULES)]:
        counts = result.rule_totals.get(name, {})
        if counts:
            lines.append(
                f"  {name:<52} {counts.get('pass', 0):>7} {counts.get('violation', 0):>7} "
                f"{counts.get(KNOWN_DEFECT, 0):>7} {counts.get('inconclusive', 0):>7}"
            )
    violating = [t for t in result.traces if t.verdict == "violation"]
    if violating:
        lines.append(f"violations ({len(violating)} traces):")
        for t in violating[:LISTED_VIOLATIONS]:
            lines.append(f"  {t.trace_id}: {_first_finding(t)}")
        if len(violating) > LISTED_VIOLATIONS:
            lines.append(f"  ... and {len(violating) - LISTED_VIOLATIONS} more (--verbose, --json or --report show all)")
    reasons = Counter(t.missing[0] if t.missing else "no rule could judge it" for t in result.traces if t.verdict == "inconclusive")
    if reasons:
        lines.append(f"inconclusive ({sum(reasons.values())} traces):")
        for reason, n in reasons.most_common(5):
            lines.append(f"  {n} x {_short(reason)}")
    cov = data["coverage"]
    lines.append(f"actions never seen: {', '.join(cov['actions_missing']) or 'none'}")
    lines.append(f"rules not exercised: {', '.join(cov['rules_not_exercised']) or 'none'}")
    if verbose or len(result.traces) <= DETAIL_TRACES:
        for t in result.traces:
            lines += _trace_table(t)
    return "\n".join(lines)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _finding_line(f: Mapping[str, Any]) -> str:
    """A rule's finding in one line: its first sample (seq and detail), else its note."""
    sample = f["sample"][0] if f["sample"] else None
    return _short(f"{f['rule']} at seq {sample['seq']}: {sample['detail']}" if sample else f"{f['rule']}: {f['note']}")


def _first_finding(t: TraceVerdict) -> str:
    """The trace's first violation in one line: the replay's divergence if it has one, else the first rule's sample."""
    return next((_finding_line(f) for f in t.findings if f["status"] == "violation"), "violation")


def _trace_table(t: TraceVerdict) -> list[str]:
    """One trace's verdict, its rules' statuses, and the samples of its violations."""
    lines = [f"trace {t.trace_id} ({t.observation}, {t.events} events): {t.verdict.upper()}"]
    lines += [f"  missing: {m}" for m in t.missing]
    lines.append(f"  {'rule':<52} {'status':<13} {'checked':>9} {'broken':>7}")
    lines += [f"  {f['rule']:<52} {f['status']:<13} {f['checked']:>9} {f['violations']:>7}" for f in t.findings]
    for f in t.findings:
        for s in f["sample"]:
            lines.append(f"  ! {f['rule']} at seq {s['seq']}: {s['detail']}")
            if s.get("raw"):
                lines.append(f"    raw: {s['raw']}")
    return lines


def to_junit_xml(result: CheckResult) -> str:
    """JUnit XML for CI systems: one test case per trace, one failure per violated rule; an
    inconclusive trace is a skipped case naming why."""
    suite = ElementTree.Element(
        "testsuite",
        name="flowspec check",
        tests=str(len(result.traces)),
        failures=str(sum(1 for t in result.traces if t.verdict == "violation")),
        skipped=str(sum(1 for t in result.traces if t.verdict == "inconclusive")),
    )
    for t in result.traces:
        case = ElementTree.SubElement(suite, "testcase", classname=f"flowspec.{t.observation}", name=t.trace_id)
        for f in t.findings:
            if f["status"] == "violation":
                failure = ElementTree.SubElement(case, "failure", message=_finding_line(f), type=f["rule"])
                failure.text = "\n".join(f"seq {s['seq']}: {s['detail']}" + (f"\n  raw: {s['raw']}" if s.get("raw") else "") for s in f["sample"]) or f["note"]
        if t.verdict == "inconclusive":
            ElementTree.SubElement(case, "skipped", message=_short("; ".join(t.missing) or "no rule could judge it"))
    root = ElementTree.Element("testsuites")
    root.append(suite)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


# -- HTML -----------------------------------------------------------------------------------------


def _chart(title: str, series: Mapping[str, Sequence[float]], x0: int, bin_ms: int, threshold: float | None = None) -> str:
    """A line chart of several series over time bins, as inline SVG."""
    w, h, pad = 560, 160, 36
    values = [v for s in series.values() for v in s] + ([threshold] if threshold is not None else [])
    top = max(values + [1.0])
    n = max((len(s) for s in series.values()), default=1)

    def x(i: int) -> float:
        return pad + (w - 2 * pad) * i / max(1, n - 1)

    def y(v: float) -> float:
        return h - pad + (-(h - 2 * pad) * v / top)

    parts = [f'<svg width="{w}" height="{h}" role="img" aria-label="{html.escape(title)}">']
    parts.append(f'<text x="{pad}" y="14" font-size="12">{html.escape(title)}</text>')
    parts.append(f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>')
    parts.append(f'<text x="2" y="{pad}" font-size="10">{top:g}</text><text x="2" y="{h - pad}" font-size="10">0</text>')
    parts.append(f'<text x="{pad}" y="{h - 8}" font-size="10">0 ms (ts {x0})</text>')
    parts.append(f'<text x="{w - pad - 80}" y="{h - 8}" font-size="10">{n * bin_ms} ms</text>')
    if threshold is not None:
        parts.append(f'<line x1="{pad}" y1="{y(threshold):.1f}" x2="{w - pad}" y2="{y(threshold):.1f}" stroke="#d62728" stroke-dasharray="4 3"/>')
    free = [c for c in COLOURS if c not in FIXED_COLOURS.values()]
    others = [name for name in sorted(series) if name not in FIXED_COLOURS]
    for k, (name, s) in enumerate(sorted(series.items())):
        colour = FIXED_COLOURS.get(name) or free[others.index(name) % len(free)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(s))
        parts.append(f'<polyline fill="none" stroke="{colour}" points="{points}"/>')
        # Right-aligned at the chart's edge, so that a long name (REQUEST_CODE_NOT_SUPPORTED) is not cut off.
        parts.append(f'<text x="{w - 4}" y="{28 + 12 * k}" font-size="10" text-anchor="end" fill="{colour}">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _topic_table(by_topic: Mapping[str, Mapping[str, int]]) -> str:
    """What each topic was told: one row per topic, one column per kind of answer."""
    if not by_topic:
        return ""
    kinds = sorted({k for counts in by_topic.values() for k in counts})
    rows = ["<table><tr><th>topic</th>" + "".join(f"<th>{html.escape(k)}</th>" for k in kinds) + "</tr>"]
    for topic, counts in sorted(by_topic.items(), key=lambda tc: -sum(tc[1].values())):
        cells = "".join(f"<td>{counts.get(k, 0)}</td>" for k in kinds)
        rows.append(f"<tr><td>{html.escape(topic)}</td>{cells}</tr>")
    return "<h3>answers per topic</h3>" + "".join(rows) + "</table>"


def _trace_html(t: TraceVerdict) -> str:
    out = [f'<h2 id="{html.escape(t.trace_id)}">{html.escape(t.trace_id)}: {t.verdict}</h2>']
    out.append(f"<p>{t.events} events, observation {t.observation}. {html.escape('; '.join(t.missing))}</p>")
    s = t.series
    if s:
        x0, b = s["t0"], s["bin_ms"]
        out.append(_chart("queue depth per queue", s["queue_depth"], x0, b))
        out.append(_chart("lock hold time (ms) vs busy threshold (dashed)", {"hold": s["lock_hold_ms"]}, x0, b, s["busy_threshold_ms"]))
        if s["pool_enabled"]:
            out.append(_chart("free pool buffers", {"free": s["free_buffers"]}, x0, b))
        out.append(_chart(f"answers by kind (per {b} ms)", s["answers"], x0, b))
        out.append(_topic_table(s["answers_by_topic"]))
    out.append("<h3>rules</h3><table><tr><th>rule</th><th>status</th><th>checked</th><th>violations</th><th>note</th></tr>")
    for f in t.findings:
        note = f["note"] if f["rule"] != REPLAY or f["status"] == "inconclusive" else ""
        out.append(
            f'<tr class="{f["status"]}"><td>{html.escape(f["rule"])}</td><td>{f["status"]}</td>'
            f'<td>{f["checked"]}</td><td>{f["violations"]}</td><td>{html.escape(note)}</td></tr>'
        )
    out.append("</table>")
    for f in t.findings:
        for sample in f["sample"]:
            out.append(
                f'<div class="violation"><b>{html.escape(f["rule"])}</b> at seq {sample["seq"]}'
                f'<pre>{html.escape(sample["detail"])}</pre>{_around(sample)}</div>'
            )
    return "\n".join(out)


def _around(sample: Mapping[str, Any]) -> str:
    """The sampled event's raw record, with the events around it when the check read them (the
    sampled one marked), as a small table by seq."""
    events = sample.get("context") or ([[sample["seq"], sample["raw"]]] if sample.get("raw") else [])
    if not events:
        return ""
    here = ' class="here"'
    rows = "".join(
        f'<tr{here if seq == sample["seq"] else ""}><td>{seq}</td><td><code>{html.escape(raw)}</code></td></tr>' for seq, raw in events
    )
    caption = "the events around it" if sample.get("context") else "the event"
    return f'<table class="around"><caption>{caption}</caption><tr><th>seq</th><th>record</th></tr>{rows}</table>'


def _matters(t: TraceVerdict) -> bool:
    """Whether a trace gets its own section in a report of many: not conformant, or a known defect shows."""
    return t.verdict != "conformant" or any(f["status"] == KNOWN_DEFECT for f in t.findings)


def _answer_totals(t: TraceVerdict) -> str:
    """The trace's answers by kind, most first (``SUCCESS 310, [OVERLOAD] 12``)."""
    totals = Counter({kind: int(sum(counts)) for kind, counts in t.series.get("answers", {}).items()})
    return ", ".join(f"{kind} {n}" for kind, n in totals.most_common() if n)


def _summary_table(result: CheckResult, detailed: set[str]) -> str:
    """One row per trace, sortable by any column (click its heading); a trace with a section is linked."""
    rows = ['<table id="traces"><tr><th>trace</th><th>verdict</th><th>observation</th><th>events</th><th>answers by kind</th><th>first finding</th></tr>']
    for t in result.traces:
        name = html.escape(t.trace_id)
        cell = f'<a href="#{name}">{name}</a>' if t.trace_id in detailed else name
        first = _first_finding(t) if t.verdict == "violation" else (_short(t.missing[0]) if t.verdict == "inconclusive" and t.missing else "")
        known = next((f for f in t.findings if f["status"] == KNOWN_DEFECT), None)
        if not first and known is not None:
            first = f"known defect of the release: {_finding_line(known)}"
        rows.append(
            f'<tr class="{t.verdict}"><td>{cell}</td><td>{t.verdict}</td><td>{t.observation}</td>'
            f'<td data-sort="{t.events}">{t.events}</td><td>{html.escape(_answer_totals(t))}</td><td>{html.escape(first)}</td></tr>'
        )
    return "".join(rows) + "</table>"


#: Sorts the summary table by the clicked column (numbers by value), again to reverse.
_SORT_SCRIPT = """
document.querySelectorAll('#traces th').forEach((th, col) => th.onclick = () => {
  const table = th.closest('table'), rows = [...table.rows].slice(1);
  const key = r => { const c = r.cells[col]; const v = c.dataset.sort ?? c.textContent; return isNaN(v) ? v : Number(v); };
  const up = table.dataset.col == col && table.dataset.dir != 'up';
  rows.sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0) * (up ? 1 : -1));
  table.dataset.col = col; table.dataset.dir = up ? 'up' : 'down';
  rows.forEach(r => table.tBodies[0].appendChild(r));
});
"""


def to_html(result: CheckResult) -> str:
    """The report page."""
    data = to_json(result)
    tot = data["totals"]
    cov = data["coverage"]
    detailed = result.traces if len(result.traces) <= REPORT_SECTIONS else [t for t in result.traces if _matters(t)]
    body = [
        "<h1>flowspec check</h1>",
        f"<p>{tot['traces']} traces, {tot['events']} events: {tot['conformant']} conformant, {tot['violation']} violation, {tot['inconclusive']} inconclusive.</p>",
        "<h2>Rules</h2><table><tr><th>rule</th><th>traces by status</th></tr>",
        *(
            f"<tr><td>{html.escape(r)}</td><td>{html.escape(', '.join(f'{status} {n}' for status, n in sorted(s.items())))}</td></tr>"
            for r, s in sorted(result.rule_totals.items())
        ),
        "</table>",
        f"<p>Actions never seen: {html.escape(', '.join(cov['actions_missing']) or 'none')}</p>",
        "<h2>Traces</h2>",
        _summary_table(result, {t.trace_id for t in detailed}),
        *([f"<p>{len(result.traces) - len(detailed)} conformant traces are in the table only.</p>"] if len(detailed) < len(result.traces) else []),
        *(_trace_html(t) for t in detailed),
    ]
    style = (
        "body{font-family:sans-serif;max-width:1200px;margin:auto} table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px} tr.violation{background:#fdd}"
        "tr.inconclusive{background:#ffd} pre{white-space:pre-wrap;font-size:12px} svg{margin:4px;border:1px solid #eee}"
        "#traces th{cursor:pointer} table.around{margin:4px 0} table.around caption{text-align:left;font-size:12px}"
        "table.around code{font-size:11px;white-space:pre-wrap;word-break:break-all} tr.here{background:#fdd;font-weight:bold}"
    )
    return f"<!doctype html><html><head><meta charset='utf-8'><title>flowspec check</title><style>{style}</style></head><body>{''.join(body)}<script>{_SORT_SCRIPT}</script></body></html>"
