"""A processor's own answer is its business, not flow control's: a trace may show any code there.

A real broker answers a pull PULL_NOT_FOUND and an admin command with its own result; the spec
writes SUCCESS in its place (spec.state.recorded_as). Every judge accepts another code there, at
every level, and none accepts a flow-control remark there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scan_oracle import events_table
from spec.codes import OVERLOAD_REMARK, ResponseCode
from traces.checking.partial import Budgets, replay_partial, witness_records
from traces.checking.replay import replay_records
from traces.checking.scan import scan_trace
from traces.format.project import project
from traces.format.read import raw_records
from traces.format.records import HEADER_KIND, Observation, header_from_record
from traces.recording.record import record_workload

PULL_NOT_FOUND = 19
RESPONSES = "responses_carry_the_profile_codes_and_remarks"


def _answered_by_a_processor(tmp_path: Path, code: int, remark: str | None) -> list[dict[str, Any]]:
    """A recorded steady trace whose first processor answer (SUCCESS off the put path) is ``code``/``remark``."""
    out = tmp_path / "steady.jsonl"
    record_workload(out, "steady", "5.3.3", 300)
    records = [r for _, r in raw_records(out)]
    i = next(i for i, r in enumerate(records) if r["kind"] == "WorkerProcessesRequest" and r["responses"] and r["responses"][0]["code"] == 0)
    records[i] = {**records[i], "responses": [{**records[i]["responses"][0], "code": code, "remark": remark}]}
    return records


def _rule_flags(records: list[dict[str, Any]], level: Observation) -> bool:
    projected = list(project(records, level))
    events = [r for r in projected if r["kind"] != HEADER_KIND]
    return bool(scan_trace(header_from_record(projected[0]), events_table(events))[RESPONSES].sample)


def test_another_code_from_a_processor_is_conformant_at_every_level(tmp_path: Path) -> None:
    records = _answered_by_a_processor(tmp_path, PULL_NOT_FOUND, "no new message")
    (full,) = replay_records(records)
    assert full.verdict == "conformant", full.divergence
    projected = list(project(records, Observation.QUEUES))
    header = header_from_record(projected[0])
    partial = replay_partial(header, projected[1:], Budgets(seconds=60))
    assert partial.verdict == "conformant", partial.detail
    witness = list(witness_records(header, partial))
    assert any(r["code"] == PULL_NOT_FOUND for e in witness for r in e.get("responses") or ()), "the witness shows the trace's answer"
    (replayed,) = replay_records(witness)
    assert replayed.verdict == "conformant", replayed.divergence
    assert not _rule_flags(records, Observation.BLACK_BOX)


def test_a_flow_control_remark_from_a_processor_is_a_violation(tmp_path: Path) -> None:
    records = _answered_by_a_processor(tmp_path, int(ResponseCode.SYSTEM_BUSY), OVERLOAD_REMARK)
    (full,) = replay_records(records)
    assert full.verdict == "violation" and full.divergence is not None and full.divergence.kind == "responses differ"
    # On the wire alone the same answer is the dispatcher's [OVERLOAD], which a request may get;
    # a flow-control tag on text the profile never writes is no answer of any code path.
    assert not _rule_flags(records, Observation.BLACK_BOX)
    retagged = _answered_by_a_processor(tmp_path, int(ResponseCode.SYSTEM_BUSY), "[OVERLOAD]not the broker's text")
    assert _rule_flags(retagged, Observation.BLACK_BOX)
