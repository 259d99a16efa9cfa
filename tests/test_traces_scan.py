"""The array scan (traces.checking.scan) counts what the per-event oracle (tests/scan_oracle.py) counts.

Both judge every scan rule over the same trace; they must agree on each rule's checked and
violation counts, on every example (conformant and broken, at every observation level) and on
recorded workloads of every profile. They agree on broken traces too: leaving an empty queue
takes nothing in both, a worker answer with no task is not compared in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from scan_oracle import events_table, scan_trace as scan_events
from traces.recording.examples import EXAMPLES
from traces.format.records import HEADER_KIND, header_from_record
from traces.format.read import read_records
from traces.recording.record import WORKLOADS, record_workload
from traces.checking.scan import scan_trace

VERSIONS = ("4.3.2", "4.9.8", "5.3.3")


def _traces(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_trace.setdefault(r["trace_id"], []).append(r)
    return by_trace


def _assert_same_counts(records: list[dict[str, Any]]) -> int:
    """Both scans over each trace in ``records``; the number of (rule, trace) pairs that checked something."""
    compared = 0
    for trace_id, rows in _traces(records).items():
        header = header_from_record(next(r for r in rows if r["kind"] == HEADER_KIND))
        events = sorted((r for r in rows if r["kind"] != HEADER_KIND), key=lambda r: r["seq"])
        expected = scan_events(header, events)
        got = scan_trace(header, events_table(events))
        for rule, finding in expected.items():
            counts = (got[rule].checked, got[rule].violations)
            assert counts == (finding.checked, finding.violations), (trace_id, rule, finding.sample, got[rule].sample)
            assert bool(got[rule].sample) == bool(finding.violations), (trace_id, rule)
            compared += finding.checked > 0
    return compared


def test_same_counts_on_every_example() -> None:
    compared = sum(_assert_same_counts([r.data for r in read_records([str(p)])]) for p in sorted(EXAMPLES.glob("*.jsonl")))
    assert compared > 50


@pytest.mark.parametrize("version", VERSIONS)
def test_same_counts_on_recorded_workloads(version: str, tmp_path: Path) -> None:
    compared = 0
    for seed, workload in enumerate(sorted(WORKLOADS)):
        out = tmp_path / workload
        record_workload(out, workload, version, events=1500, seed=seed)
        compared += _assert_same_counts(pq.read_table(out).to_pylist())
    assert compared >= 4 * len(WORKLOADS)
