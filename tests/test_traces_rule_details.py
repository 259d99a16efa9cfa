"""What each rule reports, not only whether it fires: counts, the event, and the detail a person reads.

A rule that flags the right trace with a wrong count, at the wrong event or with a detail that
names the wrong queue, worker or holder misleads whoever acts on it. These tests pin, for each
broken example, what its rule says, and the predicates of the answers' codes branch by branch;
they kill the mutants of traces/checking/scan.py and rules.py that the examples' verdicts alone
let survive (``make mutants``, docs/checker-mutants.md).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from scan_oracle import events_table
from spec.codes import (
    OVERLOAD_REMARK,
    PC_SYNCHRONIZED_REMARK,
    REJECT_REQUEST_REMARK,
    RequestCode,
    ResponseCode,
    not_supported_remark,
    rate_limit_remark,
    timeout_remark,
)
from spec.config import broker_config
from spec.releases import profile
from traces.checking.rules import expected_answer_ok, header_facts
from traces.checking.scan import SCAN_COLUMNS, Events, TraceScan, scan_trace
from traces.format.records import HEADER_KIND, Observation, TraceHeader, header_from_record
from traces.recording.examples import EXAMPLES

Event = dict[str, Any]

#: Per broken example, its rule's counts (checked, violations) and first sampled break (seq, detail).
FIRST_BREAK: dict[str, tuple[int, int, tuple[int, str]]] = {
    "begin_time_zero_when_lock_free": (1, 1, (31, "WorkerThrowsInsideLock left beginTimeInLock = 33 with the lock free")),
    "buffers_conserved_and_returned_only_at_full_commit": (
        5, 1, (49, "a buffer returned while no file is committed to its size 2: (MappedFile(index=0, wrote=0, committed=0, write_buffer=0),)")),
    "each_request_is_answered_exactly_once": (75, 1, (8, "opaque 3 (code 310, oneway false) got 0 responses")),
    "fast_failure_runs_10ms_apart_while_enabled": (25, 15, (232, "run 9 (FastFailureStartsRun) at ts 171: due no earlier than 191, switch on")),
    "fifo_service_per_queue": (69, 2, (9, "worker ('admin', 0) took opaque 1 but answered opaque 2")),
    "limiter_decisions_as_the_bucket_says": (
        74, 43, (98, "topic '%RETRY%get-pugc-to-ai-consumer' at ts 27: the bucket admits, the trace RateLimitHandlerThrottles")),
    "lock_held_by_one_writer_at_a_time": (55, 2, (46, "HaServiceAcquiresPutLock while ('send', 0) holds the lock")),
    "no_queue_over_capacity": (31, 9, (110, "send queue holds 3 > capacity 2")),
    "no_response_before_its_request": (75, 1, (9, "response to opaque 999999 at seq 9; its request arrived at seq never")),
    "pcbusy_only_while_busy": (2, 2, (505, "[PCBUSY_CLEAN_QUEUE] at ts 352 with beginTimeInLock 330: not busy")),
    "rejectrequest_only_while_busy_or_deficient": (
        20, 20, (125, "[REJECTREQUEST] at ts 108: not busy (beginTimeInLock 107) and 18 buffers available")),
    "responses_carry_the_profile_codes_and_remarks": (
        29, 1, (76, "opaque 6 (code 10, oneway False): answered code 0 remark [REJECTREQUEST]system busy, start flow control for a while")),
    "timeout_only_after_the_queue_wait": (
        8, 5, (259, "send task waited 56 ms (wait 5000), queue size after 3; remark says period 56, size 3")),
}


def _example(name: str) -> tuple[TraceHeader, list[Event]]:
    rows = [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines()]
    return header_from_record(rows[0]), [r for r in rows if r["kind"] != HEADER_KIND]


@pytest.mark.parametrize("rule", sorted(FIRST_BREAK))
def test_each_broken_example_reports_its_count_event_and_detail(rule: str) -> None:
    header, events = _example(f"broken-{rule}.jsonl")
    finding = scan_trace(header, events_table(events))[rule]
    checked, violations, first = FIRST_BREAK[rule]
    assert (finding.checked, finding.violations, finding.sample[0]) == (checked, violations, first)
    assert len(finding.sample) == min(violations, 5) and finding.sample == sorted(finding.sample)


def test_the_second_break_of_the_lock_names_the_releasing_worker_and_the_ha_holder() -> None:
    header, events = _example("broken-lock_held_by_one_writer_at_a_time.jsonl")
    sample = scan_trace(header, events_table(events))["lock_held_by_one_writer_at_a_time"].sample
    assert sample[1] == (55, "WorkerAppendsAndUnlocks by ('send', 0) while the holder is ('ha', 0)")


def test_every_bad_buffer_return_is_counted_and_the_first_five_sampled() -> None:
    header, events = _example("broken-buffers_conserved_and_returned_only_at_full_commit.jsonl")
    bad = next(i for i, e in enumerate(events) if e["seq"] == 49)
    events[bad + 1 : bad + 1] = [events[bad]] * 6  # six more returns with nothing committed to return
    numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    finding = scan_trace(header, events_table(numbered))["buffers_conserved_and_returned_only_at_full_commit"]
    assert finding.violations == 7 and finding.checked == 5 + 6
    assert [seq for seq, _ in finding.sample] == [49, 50, 51, 52, 53]


def test_an_element_taken_from_an_empty_queue_names_that_queue() -> None:
    header, events = _example("conformant-full-send-queue.jsonl")
    first = next(i for i, e in enumerate(events) if e["kind"] == "DispatchQueuesTask")
    taker = {"trace_id": events[0]["trace_id"], "ts": events[first]["ts"]}
    events[first:first] = [
        {**taker, "kind": "WorkerTakesTask", "executor": "send", "worker": 0},
        {**taker, "kind": "FastFailureDrainsBusySendQueue", "responses": [{"request_id": 1, "code": 2, "remark": "x"}]},
        {**taker, "kind": "FastFailureCleansExpiredHead", "queue": "pull", "responses": [{"request_id": 1, "code": 2, "remark": "x"}]},
    ]
    numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    sample = scan_trace(header, events_table(numbered))["fifo_service_per_queue"].sample
    assert sample[:3] == [(first + 1, "send queue is empty, yet an element left it"),
                          (first + 2, "send queue is empty, yet an element left it"),
                          (first + 3, "pull queue is empty, yet an element left it")]


def test_a_scan_over_several_traces_sliced_per_trace_is_the_scan_of_each() -> None:
    names = ["broken-lock_held_by_one_writer_at_a_time.jsonl", "broken-timeout_only_after_the_queue_wait.jsonl", "conformant-5.3.3.jsonl"]
    traces = [_example(name) for name in names]
    tables = [events_table(events).select(list(SCAN_COLUMNS)) for _, events in traces]
    together = Events.of(pa.concat_tables(tables))
    start = 0
    for (header, _), table in zip(traces, tables):
        alone = scan_trace(header, table)
        sliced = TraceScan(header, together.slice(start, start + table.num_rows)).findings
        assert sliced == alone
        start += table.num_rows


def test_a_fast_failure_run_while_the_switch_is_off_says_the_switch_was_off() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    run = next(i for i, e in enumerate(events) if e["kind"] == "FastFailureStartsRun")
    events.insert(run, {**events[run], "kind": "OperatorSetsFastFailureEnable", "enabled": False})
    finding = _scan(header, events).findings["fast_failure_runs_10ms_apart_while_enabled"]
    assert finding.sample[0][0] == run + 2 and finding.sample[0][1].endswith("switch off")


def test_the_lock_rule_names_each_writer_by_its_executor_and_worker_index() -> None:
    header, _ = _example("conformant-slow-disk.jsonl")
    assert list(_scan(header, []).queue_names[:2]) == ["send", "admin"]
    at = {"trace_id": header.trace_id, "ts": 30}
    events = [{**at, "kind": "WorkerAcquiresPutLock", "executor": "admin", "worker": 1},
              {**at, "kind": "WorkerAppendsAndUnlocks", "executor": "send", "worker": 0}]
    sample = _scan(header, events).findings["lock_held_by_one_writer_at_a_time"].sample
    assert sample == [(2, "WorkerAppendsAndUnlocks by ('send', 0) while the holder is ('admin', 1)")]


# -- responses_carry_the_profile_codes_and_remarks: the code each remark must come with ----------


def _facts(release: str) -> dict[str, Any]:
    return header_facts(TraceHeader("t", "test", "1", release, Observation.BLACK_BOX, broker_config(profile(release))))


@pytest.mark.parametrize("release", ["4.3.2", "5.3.3"])
def test_each_remark_fits_only_its_code(release: str) -> None:
    facts = _facts(release)
    busy, error, ok = int(ResponseCode.SYSTEM_BUSY), int(ResponseCode.SYSTEM_ERROR), int(ResponseCode.SUCCESS)
    not_supported = not_supported_remark(99999)
    sendback = profile(release).page_cache_busy_status
    cases = [
        (busy, REJECT_REQUEST_REMARK, True), (ok, REJECT_REQUEST_REMARK, False),
        (busy, OVERLOAD_REMARK, True), (error, OVERLOAD_REMARK, False),
        (int(profile(release).pc_synchronized_code), PC_SYNCHRONIZED_REMARK, True), (ok, PC_SYNCHRONIZED_REMARK, False),
        (busy, timeout_remark(200, 3), True), (error, timeout_remark(200, 3), False),
        (busy, rate_limit_remark("t", 5), True), (ok, rate_limit_remark("t", 5), False),
        (int(ResponseCode.REQUEST_CODE_NOT_SUPPORTED), not_supported, True), (busy, not_supported, False),
        (error, sendback, True), (busy, sendback, False),
        (ok, None, True), (busy, None, True), (ok, "a processor's own text", True), (error, "a processor's own text", True),
        (busy, "[PCBUSY_CLEAN_QUEUE]broker busy, but no period", False), (busy, "[OVERLOAD]another text", False),
    ]
    assert [(code, remark, expected_answer_ok(code, remark, facts)) for code, remark, _ in cases] == cases


def test_the_consumer_send_back_busy_answer_is_the_status_name_with_system_error() -> None:
    assert _facts("5.3.3")["sendback_remark"] == profile("5.3.3").page_cache_busy_status
    assert _facts("5.3.3")["sendback_code"] == int(ResponseCode.SYSTEM_ERROR)
    assert _facts("5.3.3")["pc_code"] == int(profile("5.3.3").pc_synchronized_code)


# -- each_request_is_answered_exactly_once: which requests may go unanswered ----------------------


def _flagged_answers(release: str, code: int, default_processor_registered: bool = True, oneway: bool = False, answers: int = 0) -> list[int]:
    """The seqs each_request_is_answered_exactly_once flags in a black-box trace of ``release`` where one
    request of ``code`` arrives and gets ``answers`` answers."""
    config = replace(broker_config(profile(release)), default_processor_registered=default_processor_registered)
    header = TraceHeader("t", "test", "1", release, Observation.BLACK_BOX, config)
    at = {"trace_id": "t", "ts": 5}
    arrival = {**at, "seq": 1, "kind": "RequestArrives", "io_thread": 0, "code": code, "topic": "", "oneway": oneway, "request_id": 7}
    answer = {**at, "kind": "Response", "responses": [{"request_id": 7, "code": int(ResponseCode.SYSTEM_BUSY), "remark": OVERLOAD_REMARK}]}
    events = [arrival, *({**answer, "seq": seq} for seq in range(2, 2 + answers))]
    return [seq for seq, _ in scan_trace(header, events_table(events))["each_request_is_answered_exactly_once"].sample]


def _unanswered(release: str, code: int, default_processor_registered: bool = True) -> list[int]:
    """The seqs flagged where one non-oneway request of ``code`` arrives and gets no answer."""
    return _flagged_answers(release, code, default_processor_registered)


def test_a_request_that_needs_no_answer_may_get_one_but_never_two() -> None:
    send, unknown = int(RequestCode.SEND_MESSAGE), 99999
    assert _flagged_answers("5.3.3", send, oneway=True, answers=0) == []
    assert _flagged_answers("5.3.3", send, oneway=True, answers=1) == []  # which answers may go to a oneway is another rule's
    assert _flagged_answers("5.3.3", send, oneway=True, answers=2) == [1]
    assert _flagged_answers("4.3.2", unknown, answers=1) == []
    assert _flagged_answers("4.3.2", unknown, answers=2) == [1]
    assert _flagged_answers("5.3.3", send, answers=2) == [1]


def test_only_an_unknown_code_on_a_release_whose_admin_processor_returns_null_may_go_unanswered() -> None:
    unknown = 99999
    assert _unanswered("4.3.2", unknown) == []  # AdminBrokerProcessor's default: returns null before 4.9.1
    assert _unanswered("4.9.8", unknown) == [1]  # from 4.9.1 it answers REQUEST_CODE_NOT_SUPPORTED
    assert _unanswered("5.3.3", unknown) == [1]
    assert _unanswered("4.3.2", unknown, default_processor_registered=False) == [1]  # the dispatcher answers itself


def test_a_code_a_processor_or_the_admin_switch_answers_must_be_answered_even_where_unknown_codes_go_silent() -> None:
    send, runtime_info = int(RequestCode.SEND_MESSAGE), 28  # GET_BROKER_RUNTIME_INFO, an admin switch case
    registered = {c for c, _ in profile("4.3.2").executor_of_code}
    assert send in registered - profile("4.3.2").admin_codes
    assert runtime_info in profile("4.3.2").admin_codes - registered
    assert _unanswered("4.3.2", send) == [1]
    assert _unanswered("4.3.2", runtime_info) == [1]


def _scan(header: TraceHeader, events: list[Event]) -> TraceScan:
    numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    return TraceScan(header, Events.of(events_table(numbered)))


def test_the_free_buffers_drawn_are_the_pools_and_none_without_a_pool() -> None:
    assert not _scan(*_example("conformant-5.3.3.jsonl")).free.any()  # pool off: no buffer to draw
    header, events = _example("conformant-pool-exhaustion.jsonl")
    free = _scan(header, events).free
    assert (free.max(), free.min(), free[-1]) == (2, 0, 1)  # one buffer lent to the open file at the end


def test_below_full_the_state_drawn_is_no_writer_and_the_whole_pool() -> None:
    """A queues-level trace shows neither the put lock nor the pool: the report draws no lock hold and
    every buffer free, none where the pool is off (the lock and pool walks do not run to set them)."""
    from traces.format.project import project

    for name, pool in (("conformant-pool-exhaustion.jsonl", 2), ("conformant-5.3.3.jsonl", 0)):
        rows = [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines()]
        projected = list(project(rows, Observation.QUEUES))
        scan = _scan(header_from_record(projected[0]), projected[1:])
        assert scan.n > 0 and scan.begin.tolist() == [0] * scan.n and scan.free.tolist() == [pool] * scan.n, name


def test_a_buffer_returned_before_its_file_is_full_is_flagged() -> None:
    header, events = _example("conformant-pool-exhaustion.jsonl")
    returned = next(i for i, e in enumerate(events) if e["kind"] == "CommitServiceReturnsBuffer")
    second_append = [i for i, e in enumerate(events) if e["kind"] == "WorkerAppendsAndUnlocks"][1]
    del events[second_append]  # the first file is one message short of full when its buffer comes back
    finding = _scan(header, events).findings["buffers_conserved_and_returned_only_at_full_commit"]
    assert finding.sample[-1][0] == returned and "a buffer returned while no file is committed to its size" in finding.sample[-1][1]


def test_a_commit_with_nothing_to_commit_is_flagged_at_its_event() -> None:
    header, events = _example("conformant-pool-exhaustion.jsonl")
    commit = next(e for e in events if e["kind"] == "CommitServiceCommits")
    events.insert(0, {**commit, "ts": events[0]["ts"]})  # before the first file: nothing written to commit
    finding = _scan(header, events).findings["buffers_conserved_and_returned_only_at_full_commit"]
    assert finding.sample[0] == (1, "a commit with nothing to commit")


def test_an_append_to_a_full_file_changes_nothing_and_the_walk_goes_on() -> None:
    header, events = _example("conformant-pool-exhaustion.jsonl")
    before = _scan(header, events).findings["buffers_conserved_and_returned_only_at_full_commit"]
    second_append = [i for i, e in enumerate(events) if e["kind"] == "WorkerAppendsAndUnlocks"][1]
    events.insert(second_append + 1, events[second_append])  # the first file (size 2) is full already
    after = _scan(header, events).findings["buffers_conserved_and_returned_only_at_full_commit"]
    assert (before.violations, after.violations, after.checked) == (0, 0, before.checked)


def test_a_foreign_element_dropped_by_fast_failure_leaves_the_send_queue() -> None:
    header, events = _example("faults-5.3.3.jsonl")
    drop = next(i for i, e in enumerate(events) if e["kind"] == "FastFailureDropsForeignElement")
    depth = _scan(header, events).depth["send"]
    assert (depth[drop - 1], depth[drop]) == (1, 0)


def test_an_admission_the_bucket_would_throttle_is_flagged_and_says_so() -> None:
    header, events = _example("conformant-retry-storm-limited.jsonl")
    throttled = next(i for i, e in enumerate(events) if e["kind"] == "RateLimitHandlerThrottles")
    events[throttled] = {**events[throttled], "kind": "RateLimitHandlerAdmits"}
    sample = _scan(header, events).findings["limiter_decisions_as_the_bucket_says"].sample
    seq, detail = sample[0]
    assert seq == throttled + 1 and detail.endswith(f" at ts {events[throttled]['ts']}: the bucket throttles, the trace RateLimitHandlerAdmits")


def test_a_topic_with_a_single_limiter_decision_is_judged_by_its_bucket() -> None:
    header, events = _example("conformant-retry-storm-limited.jsonl")
    decision = next(i for i, e in enumerate(events) if e["kind"].startswith("RateLimitHandler"))
    request = next(e for e in events[:decision] if e["kind"] == "RequestArrives" and e["io_thread"] == events[decision]["io_thread"])
    finding = _scan(header, [request, events[decision]]).findings["limiter_decisions_as_the_bucket_says"]
    assert (finding.checked, finding.violations) == (1, 0)


def test_a_commit_waits_while_a_full_files_buffer_is_due_back_though_the_next_file_has_bytes() -> None:
    """Java returns a fully committed file's buffer within the same commit() call, so until that return
    no other file is committed (spec.storepool.file_to_commit)."""
    header, _ = _example("conformant-pool-exhaustion.jsonl")  # files of 2 messages, a pool of 2 buffers
    at = {"trace_id": header.trace_id, "ts": 1}
    create, append = ({**at, "kind": kind, "executor": "send", "worker": 0} for kind in ("WorkerCreatesMappedFile", "WorkerAppendsAndUnlocks"))
    commit = {**at, "kind": "CommitServiceCommits"}
    finding = _scan(header, [create, append, append, commit, create, append, commit]).findings["buffers_conserved_and_returned_only_at_full_commit"]
    assert (finding.checked, finding.sample) == (2, [(7, "a commit with nothing to commit")])
