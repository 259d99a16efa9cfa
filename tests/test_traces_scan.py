"""The array scan (traces.checking.scan) counts what the per-event oracle (tests/scan_oracle.py) counts.

Both judge every scan rule over the same trace; they must agree on each rule's checked and
violation counts, on every example (conformant and broken, at every observation level) and on
recorded workloads of every profile. They agree on broken traces too: leaving an empty queue
takes nothing in both, a worker answer with no task is not compared in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scan_oracle import events_table, scan_trace as scan_events
from traces.recording.examples import EXAMPLES
from traces.format.records import HEADER_KIND, header_from_record
from traces.format.read import read_records
from traces.recording.record import WORKLOADS, record_workload
from traces.checking.scan import EXECUTOR_NAMES, TraceScan, _codes, _latest_before, scan_trace

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


# -- the column helpers' contracts ------------------------------------------------------------------


def test_latest_before_finds_the_latest_marked_position_of_the_same_group_only() -> None:
    group = np.array([1, 0, 1, 0, 1, 2], np.int64)
    mark = np.array([False, True, False, False, True, True])
    # Position 2 (group 1) has no marked 1 before it, though group 0 has one: -1, not group 0's.
    assert _latest_before(group, mark).tolist() == [-1, -1, -1, 1, -1, -1]
    assert _latest_before(group, np.ones(6, bool)).tolist() == [-1, -1, 0, 1, 2, -1]
    assert _latest_before(np.empty(0, np.int64), np.empty(0, bool)).tolist() == []


def test_codes_are_indices_into_the_names_another_string_past_them_and_null_minus_one() -> None:
    assert _codes(pa.chunked_array([["admin", None], ["send", "bogus"]]), EXECUTOR_NAMES).tolist() == [
        EXECUTOR_NAMES.index("admin"), -1, 0, len(EXECUTOR_NAMES)]
    assert [TraceScan._executor_name(c) for c in (0, len(EXECUTOR_NAMES) - 1, len(EXECUTOR_NAMES), -1)] == [
        "send", EXECUTOR_NAMES[-1], None, None]


def test_a_lock_holder_of_an_executor_the_config_lacks_is_named_as_unknown() -> None:
    """Validation accepts an event naming any executor of the vocabulary, even one the trace's
    config lacks (the pull executor here): the lock rule still judges it, its holder named '?'."""
    rows = [r.data for r in read_records([str(EXAMPLES / "conformant-5.3.3.jsonl")])]
    header, events = header_from_record(rows[0]), rows[1:]
    assert "pull" not in [e.name.value for e in header.config.executors]
    i = next(i for i, e in enumerate(events) if e["kind"] == "WorkerAcquiresPutLock")
    events[i] = {**events[i], "executor": "pull"}
    found = scan_trace(header, events_table(events))["lock_held_by_one_writer_at_a_time"]
    release = next(e for e in events[i + 1 :] if e["kind"] == "WorkerAppendsAndUnlocks")
    assert found.sample[0] == (release["seq"], f"WorkerAppendsAndUnlocks by ('{release['executor']}', {release['worker']}) "
                                                f"while the holder is ('?', {events[i]['worker']})")
