"""The trace format round-trips spec actions, and the replay explains the first divergence."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest
from typing import Any

import pyarrow.parquet as pq

from spec.machine import ACTION_TYPES
from spec.remoting import RequestArrives
from spec.codes import RequestCode
from spec.profiles import ExecutorName
import traces.checking.replay as replay_module
from traces.reporting import docs
from traces.recording.examples import EXAMPLES
from traces.format.project import project
from traces.format.records import Observation, action_from_record, event_record, header_from_record, json_schema, record_text
from traces.format.read import read_records
from traces.recording.record import record_workload
from traces.checking.replay import UNREACHED, ClaimFinding, Divergence, ReplayResult, merge_segments, replay_records, replay_segment, replay_trace
from traces.format.write import TraceWriter

_SAMPLE_VALUES: dict[str, Any] = {
    "int": 3,
    "bool": True,
    "str": "TopicTest",
    "RequestCode": RequestCode.SEND_MESSAGE_V2,
    "ExecutorName": ExecutorName.SEND,
}


def _records(name: str) -> list[dict[str, Any]]:
    return [r.data for r in read_records([str(EXAMPLES / name)])]


def test_every_action_round_trips_through_a_record() -> None:
    for kind in ACTION_TYPES:
        action = kind(**{f.name: _SAMPLE_VALUES[str(f.type)] for f in dataclasses.fields(kind)})
        record = json.loads(json.dumps(event_record("t", 1, 5, action, [], request_id=9)))
        assert action_from_record(record) == action


def test_generated_files_are_up_to_date() -> None:
    schema = Path(__file__).parent.parent / "traces" / "format" / "trace-event.schema.json"
    assert json.loads(schema.read_text()) == json_schema(), "run the schema generator (see traces/format/records.py)"
    assert docs.render(docs.DOC.read_text()) == docs.DOC.read_text(), "run python -m traces.reporting.docs"


def test_the_example_in_the_format_doc_replays_conformant(tmp_path: Path) -> None:
    block = docs.DOC.read_text().split("```json\n")[1].split("```")[0]
    (tmp_path / "doc.jsonl").write_text(block)
    [result] = replay_records(r.data for r in read_records([str(tmp_path / "doc.jsonl")]))
    assert result.verdict == "conformant", result


def test_conformant_examples_replay_conformant() -> None:
    for name in ("conformant-4.3.2.jsonl", "conformant-4.9.8.jsonl", "conformant-pool-exhaustion.jsonl"):
        [result] = replay_records(_records(name))
        assert result.verdict == "conformant", result.divergence and result.divergence.explain()


def test_a_wrong_answer_is_explained_with_expected_observed_state_and_record() -> None:
    records = _records("conformant-slow-disk.jsonl")
    i = next(i for i, r in enumerate(records) if any((x["remark"] or "").startswith("[REJECTREQUEST]") for x in r.get("responses") or []))
    records[i]["responses"][0]["remark"] = "[REJECTREQUEST]system busy"
    [result] = replay_records(records)
    d = result.divergence
    assert result.verdict == "violation" and d is not None
    assert (d.seq, d.kind) == (records[i]["seq"], "responses differ")
    assert "start flow control for a while" in d.expected and "'[REJECTREQUEST]system busy'" in d.observed
    assert "io_threads" in d.state and json.loads(d.record)["seq"] == d.seq


def test_an_action_the_spec_does_not_allow_is_explained() -> None:
    records = _records("conformant-5.3.3.jsonl")
    i = next(i for i, r in enumerate(records) if r["kind"] == "WorkerAcquiresPutLock")
    records[i]["kind"], records[i]["executor"] = "WorkerTakesTask", records[i]["executor"]
    [result] = replay_records(records)
    assert result.divergence is not None and result.divergence.kind == "not enabled"
    assert "WorkerTakesTask" in result.divergence.observed and "executors=" in result.divergence.state


def test_the_5_3_3_stuck_begin_time_is_a_known_defect_and_the_replay_goes_on_to_the_end() -> None:
    """A broker that behaves exactly like 5.3.3, exception inside the put lock included, follows
    the spec of 5.3.3: conformant, replayed to its last event, the stuck stamp a known defect."""
    records = _records("faults-5.3.3.jsonl")
    [result] = replay_records(records)
    assert result.verdict == "conformant" and result.divergence is None
    assert result.events == len(records) - 1
    [finding] = result.findings
    assert finding.claim == "begin_time_is_zero_when_lock_is_free" and finding.known
    assert "lock: holder=send#0" in finding.change and "-> holder=free" in finding.change


def test_a_claim_the_release_keeps_is_a_violation_found_without_stopping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the stuck stamp not a defect of the release, the same trace breaks a claim it keeps: a
    violation, with the replay still followed to the end and the event's raw record attached."""
    monkeypatch.setattr(replay_module, "known_defects", lambda profile: frozenset())
    records = _records("faults-5.3.3.jsonl")
    [result] = replay_records(records)
    assert result.verdict == "violation" and result.events == len(records) - 1
    assert result.divergence is not None and result.divergence.kind == "claim broken"
    assert result.divergence.observed == "begin_time_is_zero_when_lock_is_free"
    broke = next(r for r in records if r["seq"] == result.divergence.seq and r["kind"] != "TraceHeader")
    assert (result.divergence.trace_id, result.divergence.record) == (records[0]["trace_id"], record_text(broke))
    assert [f.known for f in result.findings] == [False]


def test_parquet_dataset_has_several_row_groups_and_files_and_reads_back(tmp_path: Path) -> None:
    jsonl = _records("conformant-full-send-queue.jsonl")
    with TraceWriter(tmp_path / "ds", row_group=100, file_rows=300) as w:
        w.write_all(jsonl)
    files = sorted((tmp_path / "ds").glob("*.parquet"))
    assert len(files) >= 2 and pq.ParquetFile(files[0]).num_row_groups >= 2
    back = [r.data for r in read_records([str(tmp_path / "ds")])]
    assert [(r["seq"], r["kind"], r["responses"] or []) for r in back] == [(r["seq"], r["kind"], r.get("responses") or []) for r in jsonl]
    [result] = replay_records(back)
    assert result.verdict == "conformant"


def test_the_spec_and_the_reference_record_the_same_trace(tmp_path: Path) -> None:
    for impl in ("spec", "reference"):
        record_workload(tmp_path / f"{impl}.jsonl", "full-send-queue", "4.9.8", 200, implementation=impl)
    spec_lines = (tmp_path / "spec.jsonl").read_text().replace("flowspec-spec", "flowspec-reference")
    assert spec_lines == (tmp_path / "reference.jsonl").read_text()


def _segmented(records: list[dict[str, Any]], cuts: list[int]) -> ReplayResult:
    """Replay like the Spark job does for a long trace: one worker per segment, each given the events up to its end."""
    header, events = header_from_record(records[0]), records[1:]
    bounds = [1, *cuts, len(events) + 1]
    parts = [
        replay_segment(header, [e for e in events if e["seq"] < end], first_seq=start)
        for start, end in zip(bounds, bounds[1:])
    ]
    return merge_segments(parts)


def test_a_segmented_replay_gives_the_unsegmented_verdict() -> None:
    for name in sorted(p.name for p in EXAMPLES.glob("*.jsonl")):
        records = _records(name)
        whole = replay_trace(header_from_record(records[0]), records[1:])
        n = len(records) - 1
        for cuts in ([n // 2], [n // 5, n // 2, n - 3], [2]):
            assert _segmented(records, cuts) == whole, (name, cuts)


def test_a_divergence_before_a_segment_is_reported_by_the_segment_that_holds_it() -> None:
    records = _records("conformant-5.3.3.jsonl")
    i = next(i for i, r in enumerate(records) if r["kind"] == "WorkerAcquiresPutLock")
    records[i]["kind"] = "WorkerTakesTask"
    header, events = header_from_record(records[0]), records[1:]
    later = replay_segment(header, events, first_seq=records[i]["seq"] + 5)
    assert later.verdict == UNREACHED and f"seq {records[i]['seq']}" in later.reason
    merged = _segmented(records, [records[i]["seq"] + 5])
    assert merged.verdict == "violation" and merged.divergence is not None
    assert (merged.divergence.seq, merged.divergence.kind) == (records[i]["seq"], "not enabled")


def test_opaques_need_not_follow_the_spec_numbering() -> None:
    """A Java broker's opaques come from the client (any int, in any order); the replay maps them to its own ids."""
    records = _records("conformant-full-send-queue.jsonl")

    def opaque(x: int) -> int:
        return 1_000_003 - 7 * x  # decreasing, far from the spec's 1, 2, 3…

    for r in records:
        if r["kind"] == "RequestArrives":
            r["request_id"] = opaque(r["request_id"])
        for response in r.get("responses") or []:
            response["request_id"] = opaque(response["request_id"])
    [result] = replay_records(records)
    assert result.verdict == "conformant", result.divergence and result.divergence.explain()
    swapped = next(r for r in records if r.get("responses"))
    swapped["responses"][0]["request_id"] += 7  # the answer now names another request
    [result] = replay_records(records)
    assert result.verdict == "violation" and result.divergence is not None and result.divergence.kind == "responses differ"



def test_event_columns_records_are_the_rows_without_nulls_or_empty_responses(tmp_path: Path) -> None:
    import pyarrow as pa

    import pyarrow.compute as pc

    from traces.format.records import ARROW_SCHEMA, EVENT_COLUMNS, HEADER_KIND, REPEATED_STRINGS, RESPONSE_KIND, EventColumns

    rows = [r for name in sorted(p.name for p in EXAMPLES.glob("*.jsonl")) for r in _records(name) if r["kind"] != HEADER_KIND]
    rows.append({"trace_id": "black-box", "seq": 2, "ts": 5, "kind": RESPONSE_KIND, "responses": [{"request_id": 7, "code": 0, "remark": None}]})
    table = pa.Table.from_pylist([{c: r.get(c) for c in EVENT_COLUMNS} for r in rows], schema=pa.schema([ARROW_SCHEMA.field(c) for c in EVENT_COLUMNS]))
    plain = EventColumns(table)
    decoded = [plain.record(i) for i in range(table.num_rows)]
    assert decoded == [{k: v for k, v in r.items() if v is not None and v != []} for r in table.to_pylist()]
    assert any("responses" in r for r in decoded) and any("responses" not in r for r in decoded)
    # As read_unit gives them to the replay: repeated strings dictionary-encoded, several chunks.
    encoded = pa.concat_tables([table.slice(0, 7), table.slice(7)])
    for name in REPEATED_STRINGS:
        encoded = encoded.set_column(encoded.schema.get_field_index(name), name, pc.dictionary_encode(encoded.column(name)))
    columns = EventColumns(encoded)
    assert [columns.record(i) for i in range(encoded.num_rows)] == decoded
    # Each row's action, decoded once per distinct action, is the one its record names.
    assert columns.actions == [None if r["kind"] == RESPONSE_KIND else action_from_record(r) for r in decoded]
    assert any(a is None for a in columns.actions)


def _renumbered(records: list[dict[str, Any]], offset: int) -> list[dict[str, Any]]:
    """The trace with every opaque moved by ``offset``, as another broker would number its requests."""
    out = []
    for r in records:
        r = dict(r)
        if r.get("request_id") is not None:
            r["request_id"] += offset
        if r.get("responses"):
            r["responses"] = [{**x, "request_id": x["request_id"] + offset} for x in r["responses"]]
        out.append(r)
    return out


def test_an_event_the_spec_cannot_take_is_explained_by_its_guard_the_fields_it_read_and_the_steps_allowed() -> None:
    """The explanation names the failed guard's condition, lists the steps the spec allows instead,
    shows only the state fields that guard reads, and names requests by the trace's own opaques."""
    [result] = replay_records(_renumbered(_records("broken-no_queue_over_capacity.jsonl"), 7000))
    d = result.divergence
    assert d is not None and d.kind == "not enabled"
    assert d.observed == "DispatchQueuesTask(io_thread=0), whose guard does not hold: all core threads exist and the queue has room."
    assert "DispatchRejectsOverload(io_thread=0)" in d.expected
    assert [part.split("=")[0] for part in d.state.split("; ")] == ["io_threads", "executors"]
    assert "TASK_CREATED(#7018)" in d.state and "r18" not in d.state


def _segment(verdict: str, events: int, actions: dict[str, int], findings: tuple[tuple[str, int], ...] | list[tuple[str, int]] = (),
             divergence: str | None = None, reason: str = "", trace_id: str = "t") -> ReplayResult:
    """A segment's result built by hand: ``findings`` as (claim, seq), ``divergence`` its kind."""
    return ReplayResult(
        trace_id, verdict, events,
        divergence=None if divergence is None else Divergence(trace_id, events, divergence, "e", "o", "s", "{}"),
        reason=reason, actions=tuple(sorted(actions.items())),
        findings=tuple(ClaimFinding(c, s, False, "x") for c, s in findings),
    )


def test_merged_segments_add_their_events_and_counts_and_keep_each_claims_first_finding_in_seq_order() -> None:
    merged = merge_segments([
        _segment("conformant", 3, {"ClockAdvances": 2, "RequestArrives": 1}, [("b", 9), ("a", 2)]),
        _segment("conformant", 4, {"ClockAdvances": 1, "WorkerTakesTask": 3}, [("a", 5), ("c", 1)], trace_id="other"),
    ])
    assert merged.verdict == "conformant" and merged.trace_id == "t" and merged.events == 7
    assert merged.actions == (("ClockAdvances", 3), ("RequestArrives", 1), ("WorkerTakesTask", 3))
    assert [(f.claim, f.seq) for f in merged.findings] == [("c", 1), ("a", 2), ("b", 9)]
    assert merged.divergence is None and merged.reason == ""


def test_the_first_segment_the_spec_could_not_follow_decides_with_the_counts_up_to_it() -> None:
    for stop in ("not enabled", None):  # a divergence, or an inconclusive segment that names none
        verdict = "violation" if stop else "inconclusive"
        merged = merge_segments([
            _segment("conformant", 3, {"ClockAdvances": 2}, [("a", 2)]),
            _segment(verdict, 2, {"ClockAdvances": 1, "RequestArrives": 1}, [("b", 4)], divergence=stop, reason="why"),
            _segment("violation", 5, {"WorkerTakesTask": 5}, [("c", 7)], divergence="responses differ"),
        ])
        assert merged.verdict == verdict and merged.events == 5 and merged.reason == "why"
        assert merged.actions == (("ClockAdvances", 3), ("RequestArrives", 1))
        assert [(f.claim, f.seq) for f in merged.findings] == [("a", 2), ("b", 4)]
        assert (merged.divergence and merged.divergence.kind) == stop


def test_the_first_segment_that_broke_a_kept_claim_decides_when_every_segment_was_followed() -> None:
    merged = merge_segments([
        _segment("conformant", 1, {"ClockAdvances": 1}),
        _segment("violation", 2, {"RequestArrives": 2}, [("b", 3)], divergence="claim broken", trace_id="first"),
        _segment("violation", 3, {"ClockAdvances": 3}, [("a", 2)], divergence="claim broken", trace_id="second"),
    ])
    assert merged.verdict == "violation" and merged.trace_id == "first" and merged.events == 6
    assert merged.divergence is not None and merged.divergence.kind == "claim broken"
    assert merged.actions == (("ClockAdvances", 4), ("RequestArrives", 2))
    assert [(f.claim, f.seq) for f in merged.findings] == [("a", 2), ("b", 3)]


def test_an_unreached_segment_after_accepted_ones_makes_the_trace_inconclusive() -> None:
    merged = merge_segments([
        _segment("conformant", 3, {"ClockAdvances": 3}),
        _segment(UNREACHED, 0, {}, reason="seq 2 could not be followed", trace_id="u"),
        _segment("violation", 5, {"WorkerTakesTask": 5}, divergence="not enabled"),
    ])
    assert (merged.trace_id, merged.verdict, merged.events, merged.actions) == ("u", "inconclusive", 3, (("ClockAdvances", 3),))
    assert merged.reason == ("segments disagree: seq 2 could not be followed, though the earlier segments accepted it; "
                             "replay this trace unsegmented")
    assert merged.divergence is None and merged.findings == ()


def test_a_responses_divergence_shows_each_answer_by_the_traces_opaque_and_the_codes_name() -> None:
    records = _renumbered(_records("conformant-full-send-queue.jsonl"), 1000)
    i = next(i for i, r in enumerate(records) if r.get("responses"))
    [written] = records[i]["responses"]
    remark = written["remark"]
    records[i]["responses"] = [{**written, "request_id": 999_999, "code": 4242}, {"request_id": written["request_id"], "code": 0, "remark": None}]
    [result] = replay_records(records)
    assert result.divergence is not None and (result.divergence.seq, result.divergence.kind) == (records[i]["seq"], "responses differ")
    assert result.divergence.expected == f"[opaque {written['request_id']}: REQUEST_CODE_NOT_SUPPORTED {remark!r}]"
    assert result.divergence.observed == f"[opaque ?: 4242 {remark!r}; opaque {written['request_id']}: SUCCESS None]"
    records[i].pop("responses")
    [result] = replay_records(records)
    assert result.divergence is not None and result.divergence.observed == "no response"


def test_a_trace_below_full_is_not_replayed_and_says_why() -> None:
    records = _records("conformant-5.3.3.jsonl")
    queues = list(project(records, Observation.QUEUES))
    [result] = replay_records(queues)
    why = "replay needs observation 'full'; this trace is 'queues'"
    assert (result.trace_id, result.verdict, result.events, result.reason) == (records[0]["trace_id"], "inconclusive", 0, why)
    segment = replay_segment(header_from_record(queues[0]), iter(queues[1:]), first_seq=1)
    assert segment == dataclasses.replace(result, reason=f"{why} ({len(queues) - 1} events not replayed)")


def test_a_segment_cannot_follow_an_event_whose_clock_went_back_or_a_black_box_response() -> None:
    records = _records("conformant-5.3.3.jsonl")
    header, events = header_from_record(records[0]), records[1:]
    i = next(i for i, e in enumerate(events) if e["ts"] > 5 and e["kind"] != "ClockAdvances")
    for changed in ({**events[i], "ts": 0}, {"trace_id": events[i]["trace_id"], "seq": events[i]["seq"], "ts": events[i]["ts"],
                                              "kind": "Response", "responses": [{"request_id": 1, "code": 0, "remark": None}]}):
        later = replay_segment(header, [*events[:i], changed, *events[i + 1 :]], first_seq=events[i]["seq"] + 3)
        assert later == ReplayResult(header.trace_id, UNREACHED, 0, reason=f"seq {events[i]['seq']} could not be followed"), changed


def test_a_monitor_is_checked_on_each_step_that_admits_a_request_or_outputs_something(monkeypatch: pytest.MonkeyPatch) -> None:
    """A monitor watches requests entering and leaving: the replay checks it on every RequestArrives
    (which outputs nothing when the request is queued) and on every step that writes a response, and
    reports where each broke first. Here two monitors stand in for the spec's: one broken by every
    arrival, one by every response written by a step other than an arrival."""
    def by_arrival(config: Any, before: Any, action: Any, after: Any, out: Any) -> bool:
        return not isinstance(action, RequestArrives)

    def by_answer(config: Any, before: Any, action: Any, after: Any, out: Any) -> bool:
        return not out.responses or isinstance(action, RequestArrives)

    monkeypatch.setattr(replay_module, "_MONITOR_CHECKS", (("by_arrival", by_arrival), ("by_answer", by_answer)))
    records = _records("conformant-4.9.8.jsonl")
    arrival = next(r["seq"] for r in records if r["kind"] == "RequestArrives")
    answer = next(r["seq"] for r in records if r.get("responses") and r["kind"] != "RequestArrives")
    assert arrival < answer
    [result] = replay_records(records)
    assert result.verdict == "violation" and result.events == len(records) - 1
    assert [(f.claim, f.seq, f.known) for f in result.findings] == [("by_arrival", arrival, False), ("by_answer", answer, False)]
    assert result.findings[0].change == "next_request_id: 1 -> 2; io_threads: IDLE IDLE -> IDLE RECEIVED(#1)"
    d = result.divergence
    assert d is not None and (d.seq, d.kind, d.observed) == (arrival, "claim broken", "by_arrival")
    assert (d.expected, d.state) == ("every claim the release keeps holds", result.findings[0].change)


def test_a_replay_counts_the_events_it_replayed_by_kind() -> None:
    records = _records("conformant-4.9.8.jsonl")
    [result] = replay_records(records)
    assert result.actions == tuple(sorted(Counter(r["kind"] for r in records[1:]).items()))


def test_a_divergence_after_a_known_defect_keeps_the_defect_as_a_finding() -> None:
    """faults-5.3.3 breaks the stuck-stamp claim (a known defect of 5.3.3) and goes on; an event
    whose clock goes back after it stops the replay there, and the result still holds the finding."""
    records = _records("faults-5.3.3.jsonl")
    [clean] = replay_records(records)
    [finding] = clean.findings
    i = next(i for i, r in enumerate(records) if r["seq"] > finding.seq + 2)
    records[i]["ts"] = -1
    [result] = replay_records(records)
    d = result.divergence
    assert result.verdict == "violation" and d is not None and (d.seq, d.kind, d.observed) == (records[i]["seq"], "clock went back", "ts = -1")
    assert result.findings == (finding,) and result.events == records[i]["seq"]


def test_each_event_the_replay_cannot_check_is_a_divergence_that_says_what_was_expected() -> None:
    """A black-box Response in a full trace, a clock that goes back, a reused opaque, a ClockAdvances
    whose ts is not the clock it moved to: each stops the replay at its event, named in full."""
    records = _records("conformant-4.9.8.jsonl")
    arrivals = [i for i, r in enumerate(records) if r["kind"] == "RequestArrives"]
    late = next(i for i, r in enumerate(records) if r["seq"] > 5 and r["ts"] > 0 and r["kind"] != "ClockAdvances")
    clock = next(i for i, r in enumerate(records) if r["kind"] == "ClockAdvances" and r["seq"] > 3)
    now = records[late - 1]["ts"]
    first_opaque = records[arrivals[0]]["request_id"]
    cases = [
        (late, {"trace_id": records[late]["trace_id"], "seq": records[late]["seq"], "ts": records[late]["ts"], "kind": "Response",
                "responses": [{"request_id": 1, "code": 0, "remark": None}]},
         ("unmodelled", "an internal event", "a black-box Response")),
        (late, {**records[late], "ts": now - 1}, ("clock went back", f"ts >= {now}", f"ts = {now - 1}")),
        (arrivals[1], {**records[arrivals[1]], "request_id": first_opaque}, ("opaque reused", "a fresh opaque", f"opaque {first_opaque} again")),
        (clock, {**records[clock], "ts": records[clock]["ts"] + 1},
         ("clock differs", f"ts = {records[clock]['ts']}", f"ts = {records[clock]['ts'] + 1}")),
    ]
    for i, changed, (kind, expected, observed) in cases:
        [result] = replay_records([*records[:i], changed, *records[i + 1 :]])
        seq = records[i]["seq"]
        assert (result.trace_id, result.verdict, result.events) == (records[0]["trace_id"], "violation", seq), kind
        assert result.divergence == Divergence(records[0]["trace_id"], seq, kind, expected, observed, "", record_text(changed)), kind


def test_a_response_recorded_where_the_spec_writes_none_is_a_divergence() -> None:
    """An answer recorded at a worker's start (seq 6 of conformant-4.9.8), where the spec writes none."""
    records = _renumbered(_records("conformant-4.9.8.jsonl"), 1000)
    opaque = next(r["request_id"] for r in records if r["kind"] == "RequestArrives")
    i = next(i for i, r in enumerate(records) if r["seq"] > 5 and r["kind"] != "ClockAdvances" and not r.get("responses"))
    records[i] = {**records[i], "responses": [{"request_id": opaque, "code": 0, "remark": None}]}
    [result] = replay_records(records)
    d = result.divergence
    assert result.verdict == "violation" and d is not None
    assert (d.seq, d.kind, d.expected, d.observed) == (records[i]["seq"], "responses differ", "no response", f"[opaque {opaque}: SUCCESS None]")
    # what the step changed, requests named by the trace's opaques (#1001, #1002)
    assert d.state == ("io_threads: RECEIVED(#1002) TASK_CREATED(#1001) -> RECEIVED(#1002) IDLE; "
                       "executors: send[q=() w=()] admin[q=() w=()] -> send[q=() w=()] admin[q=() w=(TAKEN(#1001))]")
