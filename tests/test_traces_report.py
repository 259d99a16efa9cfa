"""The HTML report of many traces: a sortable table of all of them, sections only for those that matter."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traces.checking.check import KNOWN_DEFECT, CheckResult, TraceVerdict
from traces.checking.context import RADIUS
from traces.cli import main
from traces.recording.examples import EXAMPLES
from traces.reporting.report import REPORT_SECTIONS, to_html

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _finding(rule: str, status: str, detail: str = "") -> dict[str, Any]:
    sample = [{"seq": 7, "detail": detail, "raw": "{}"}] if detail else []
    return {"rule": rule, "status": status, "checked": 10, "violations": len(sample), "note": "", "sample": sample}


def _trace(name: str, verdict: str, findings: list[dict[str, Any]], answers: dict[str, list[int]] | None = None) -> TraceVerdict:
    series = {
        "t0": 1, "bin_ms": 10, "queue_depth": {"send": [0, 1]}, "lock_hold_ms": [0, 0], "busy_threshold_ms": 1000,
        "pool_enabled": False, "free_buffers": [], "answers": answers, "answers_by_topic": {},
    } if answers else {}
    return TraceVerdict(name, verdict, "full", 100, findings, [], series)


def test_many_traces_make_a_table_with_sections_only_for_those_that_matter() -> None:
    calm = [_trace(f"calm-{i}", "conformant", [_finding("no_queue_over_capacity", "pass")], {"SUCCESS": [3, 4]}) for i in range(REPORT_SECTIONS + 5)]
    broken = _trace("broken", "violation", [_finding("no_queue_over_capacity", "violation", "queue send over capacity")], {"[OVERLOAD]": [2, 9], "SUCCESS": [1, 0]})
    stuck = _trace("stuck", "conformant", [_finding("begin_time_zero_when_lock_free", KNOWN_DEFECT, "stuck busy")])
    page = to_html(CheckResult([*calm, broken, stuck], {}, {}))
    table = page.split('<table id="traces">')[1].split("</table>")[0]
    assert table.count("<tr") == len(calm) + 3  # the heading and every trace
    assert '<a href="#broken">broken</a>' in table and '<a href="#stuck">stuck</a>' in table and 'href="#calm-0"' not in table
    assert "[OVERLOAD] 11, SUCCESS 1" in table and "no_queue_over_capacity at seq 7: queue send over capacity" in table
    assert "known defect of the release: begin_time_zero_when_lock_free at seq 7: stuck busy" in table
    assert page.count("<h2 id=") == 2 and f"{len(calm)} conformant traces are in the table only" in page
    assert "<script>" in page and "querySelectorAll('#traces th')" in page


def test_a_few_traces_each_get_their_section() -> None:
    few = [_trace(f"calm-{i}", "conformant", [_finding("no_queue_over_capacity", "pass")]) for i in range(3)]
    page = to_html(CheckResult(few, {}, {}))
    assert page.count("<h2 id=") == 3 and "in the table only" not in page


def test_each_violation_shows_the_events_around_it(spark: SparkSession, tmp_path: Path) -> None:
    """With ``--report`` the check reads, for each sampled violation, the events within RADIUS of
    it from the trace's own rows (not another trace's), and the report shows them by seq with the
    sampled one marked."""
    broken = EXAMPLES / "broken-fifo_service_per_queue.jsonl"
    report = tmp_path / "r.html"
    assert main(["check", str(broken), str(EXAMPLES / "conformant-5.3.3.jsonl"), "--report", str(report)]) == 1
    page = report.read_text()
    section = page.split('<h2 id="broken-fifo_service_per_queue">')[1].split("<h2 id=")[0]
    records = {r["seq"]: r for r in map(json.loads, broken.read_text().splitlines()) if r["kind"] != "TraceHeader"}
    tables = section.split('<table class="around">')[1:]
    assert tables, "no violation shows its events"
    for table in tables:
        rows = re.findall(r"<tr( class=\"here\")?><td>(\d+)</td><td><code>(.*?)</code></td></tr>", table)
        [here] = [int(seq) for marked, seq, _ in rows if marked]
        assert [int(seq) for _, seq, _ in rows] == [s for s in range(here - RADIUS, here + RADIUS + 1) if s in records]
        for _, seq, raw in rows:
            shown = json.loads(html.unescape(raw))
            assert shown["trace_id"] == "broken-fifo_service_per_queue"
            assert shown == _as_shown(records[int(seq)])


def _as_shown(value: Any) -> Any:
    """A record as the check shows it: null fields (at any depth) and empty lists left out."""
    if isinstance(value, dict):
        return {k: _as_shown(v) for k, v in value.items() if v is not None and v != []}
    return [_as_shown(v) for v in value] if isinstance(value, list) else value
