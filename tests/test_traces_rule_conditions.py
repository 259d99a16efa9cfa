"""Each scan rule's conditions, one at a time: a trace that breaks only that condition is flagged,
by the array scan and by the per-event oracle alike, at the event that broke it.

One failing example per rule does not test each of its conditions: a weakened condition would
pass the examples. These traces are conformant recordings with one event changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from scan_oracle import events_table, scan_trace as oracle
from spec.codes import OVERLOAD_REMARK, REJECT_REQUEST_REMARK, RequestCode, ResponseCode, pcbusy_remark, timeout_remark
from spec.config import BUSY_UPPER_BOUND_MS
from traces.checking.rules import answer_goes_to
from traces.checking.scan import scan_trace
from traces.format.project import project
from traces.format.records import HEADER_KIND, Observation, TraceHeader, header_from_record, header_record
from traces.recording.examples import EXAMPLES
from test_traces_rule_details import _scan

Event = dict[str, Any]


def _example(name: str) -> tuple[TraceHeader, list[Event]]:
    rows = [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines()]
    return header_from_record(rows[0]), [r for r in rows if r["kind"] != HEADER_KIND]


def _findings(header: TraceHeader, events: list[Event], rule: str) -> list[tuple[int, int, list[tuple[int, str]]]]:
    """``rule``'s (checked, violations, sample) over ``events`` numbered from seq 1, per the array scan and
    per the oracle (which follows the scan rules; the black-box rules are the array scan's alone)."""
    numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    found = [scan_trace(header, events_table(numbered))[rule]]
    followed = oracle(header, numbered)
    found += [followed[rule]] if rule in followed else []
    return [(f.checked, f.violations, f.sample) for f in found]


def _flagged(header: TraceHeader, events: list[Event], rule: str) -> list[set[int]]:
    """The seqs at which ``rule`` broke, per the array scan and per the oracle."""
    return [{seq for seq, _ in sample} for _, _, sample in _findings(header, events, rule)]


def _index(events: list[Event], test: Callable[[Event], bool]) -> int:
    return next(i for i, e in enumerate(events) if test(e))


def _created(events: list[Event], opaque: int) -> int:
    """When the task of request ``opaque`` was created (its remoting thread's DispatchCreatesTask)."""
    arrival = _index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)
    io = events[arrival]["io_thread"]
    return int(next(e["ts"] for e in events[arrival:] if e["kind"] == "DispatchCreatesTask" and e["io_thread"] == io))


def _two_cleans() -> tuple[TraceHeader, list[Event], int]:
    """full-send-queue, and the index of a phase-2 clean followed at once by another on the same queue."""
    header, events = _example("conformant-full-send-queue.jsonl")
    i = _index(events, lambda e: e["kind"] == "FastFailureCleansExpiredHead" and bool(e.get("responses")))
    assert events[i + 1]["kind"] == "FastFailureCleansExpiredHead" and events[i + 1]["queue"] == events[i]["queue"]
    return header, events, i


def test_a_cleaner_that_answers_an_element_behind_the_head_breaks_fifo_there() -> None:
    header, events, i = _two_cleans()
    clean, behind = events[i], events[i + 1]["responses"][0]["request_id"]
    events[i] = {**clean, "responses": [{**clean["responses"][0], "request_id": behind}]}
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "fifo_service_per_queue"))


def test_the_timeout_rule_judges_the_task_that_was_answered_not_the_head() -> None:
    """A cleaner that took the element behind the head and reported that element's own wait truly
    breaks FIFO, not the timeout rule: the remark is right about the task it answered."""
    header, events, i = _two_cleans()
    clean = events[i]
    behind = events[i + 1]["responses"][0]["request_id"]
    size = int(clean["responses"][0]["remark"].rsplit(": ", 1)[1])
    remark = timeout_remark(clean["ts"] - _created(events, behind), size)
    events[i] = {**clean, "responses": [{**clean["responses"][0], "request_id": behind, "remark": remark}]}
    assert all(i + 1 not in seqs for seqs in _flagged(header, events, "timeout_only_after_the_queue_wait"))
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "fifo_service_per_queue"))


def test_a_timeout_remark_reporting_a_larger_queue_than_was_left_is_flagged() -> None:
    header, events, i = _two_cleans()
    clean = events[i]
    text = clean["responses"][0]["remark"]
    head, size = text.rsplit(": ", 1)
    events[i] = {**clean, "responses": [{**clean["responses"][0], "remark": f"{head}: {int(size) + 1}"}]}
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "timeout_only_after_the_queue_wait"))


def test_a_timeout_answer_before_the_wait_is_flagged() -> None:
    header, events, i = _two_cleans()
    clean = events[i]
    opaque = clean["responses"][0]["request_id"]
    early = _created(events, opaque) + 1  # one millisecond after the task was created: far below the wait
    events[i] = {**clean, "ts": early, "responses": [{**clean["responses"][0], "remark": timeout_remark(1, 3)}]}
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "timeout_only_after_the_queue_wait"))



def test_a_timeout_answer_is_judged_against_the_wait_its_queue_had_at_that_moment() -> None:
    """environment.OperatorSetsQueueWait changes one queue's wait from its event on."""
    header, events, i = _two_cleans()
    clean = events[i]
    waited = clean["ts"] - _created(events, clean["responses"][0]["request_id"])
    other = next(q.value for q, _ in header.config.queue_waits if q.value != clean["queue"])

    def flagged(*sets: tuple[int, str, int]) -> bool:
        """Whether the clean at ``i`` is flagged with each (index, queue, wait) set inserted (last index first)."""
        changed = list(events)
        for at, queue, wait in sorted(sets, reverse=True):
            changed.insert(at, {"trace_id": clean["trace_id"], "ts": events[at]["ts"], "kind": "OperatorSetsQueueWait",
                                "queue": queue, "wait_ms": wait})
        moved = i + sum(at <= i for at, _, _ in sets)
        found = _flagged(header, changed, "timeout_only_after_the_queue_wait")
        assert len({moved + 1 in seqs for seqs in found}) == 1, "the scan and the oracle agree"
        return moved + 1 in found[0]

    assert not flagged()
    assert flagged((i, clean["queue"], waited + 1))  # raised before the answer: it came too early
    assert not flagged((i, clean["queue"], waited))
    assert not flagged((i + 1, clean["queue"], waited + 1))  # raised only after it
    assert not flagged((i, other, waited + 1))  # another queue's wait
    assert flagged((0, clean["queue"], waited + 1), (i, other, 0))


def test_a_timeout_answer_whose_remark_gives_no_period_or_size_is_flagged_and_quoted() -> None:
    header, events, i = _two_cleans()
    clean = events[i]
    garbled = "[TIMEOUT_CLEAN_QUEUE]broker busy, but no period"
    events[i] = {**clean, "responses": [{**clean["responses"][0], "remark": garbled}]}
    numbered = [{**e, "seq": n} for n, e in enumerate(events, 1)]
    sample = scan_trace(header, events_table(numbered))["timeout_only_after_the_queue_wait"].sample
    assert (i + 1, f"[TIMEOUT_CLEAN_QUEUE] answer for a task with no creation time or an unparsable remark {garbled!r}") in sample


def test_a_timeout_answer_to_the_traces_first_event_is_judged_by_that_requests_wait() -> None:
    header, events, i = _two_cleans()
    first = _index(events, lambda e: e["kind"] == "RequestArrives")
    del events[:first]  # the clock's first step: now the first request's arrival is row 0
    i -= first
    clean, opaque = events[i], events[0]["request_id"]
    size = int(clean["responses"][0]["remark"].rsplit(": ", 1)[1])
    remark = timeout_remark(clean["ts"] - _created(events, opaque), size)
    events[i] = {**clean, "responses": [{**clean["responses"][0], "request_id": opaque, "remark": remark}]}
    assert all(i + 1 not in seqs for seqs in _flagged(header, events, "timeout_only_after_the_queue_wait"))


def test_a_timeout_answer_to_a_request_that_never_arrived_is_flagged() -> None:
    header, events, i = _two_cleans()
    clean = events[i]
    events[i] = {**clean, "responses": [{**clean["responses"][0], "request_id": 999999}]}
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "timeout_only_after_the_queue_wait"))

def _first_run(events: list[Event]) -> int:
    return _index(events, lambda e: e["kind"] == "FastFailureStartsRun")


def test_a_fast_failure_run_while_the_switch_is_off_is_flagged() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    i = _first_run(events)
    events.insert(i, {"trace_id": events[i]["trace_id"], "ts": events[i]["ts"], "kind": "OperatorSetsFastFailureEnable", "enabled": False})
    assert all(i + 2 in seqs for seqs in _flagged(header, events, "fast_failure_runs_10ms_apart_while_enabled"))


def test_a_skipped_fast_failure_run_while_the_switch_is_on_is_flagged() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    i = _first_run(events)
    events[i] = {**events[i], "kind": "FastFailureSkipsRun"}
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "fast_failure_runs_10ms_apart_while_enabled"))


def test_a_fast_failure_run_before_it_is_due_is_flagged() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    i = _first_run(events)
    events[i] = {**events[i], "ts": header.config.start_time_ms}  # the first run is due after the initial delay
    assert all(i + 1 in seqs for seqs in _flagged(header, events, "fast_failure_runs_10ms_apart_while_enabled"))


# -- responses_carry_the_profile_codes_and_remarks: who an answer may go to, at black-box ------------------


def _black_box(name: str) -> tuple[TraceHeader, list[Event]]:
    rows = [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines()]
    projected = list(project(rows, Observation.BLACK_BOX))
    return header_from_record(projected[0]), projected[1:]


def _request_answered(events: list[Event], starts: str) -> tuple[int, int]:
    """The indices of the first answer whose remark starts with ``starts`` (None: no remark) and of its request."""
    answer = _index(events, lambda e: e["kind"] == "Response" and (e["responses"][0]["remark"] or "None").startswith(starts))
    opaque = events[answer]["responses"][0]["request_id"]
    return answer, _index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)


def _answer_flagged(name: str, starts: str, change: dict[str, Any]) -> bool:
    header, events = _black_box(name)
    answer, request = _request_answered(events, starts)
    assert not any(answer + 1 in seqs for seqs in _flagged(header, events, RESPONSES)), "the recording itself is fine"
    events[request] = {**events[request], **change}
    (flagged,) = [answer + 1 in seqs for seqs in _flagged(header, events, RESPONSES)]
    return flagged


RESPONSES = "responses_carry_the_profile_codes_and_remarks"


def test_overload_success_and_5_3_3_rejectrequest_never_go_to_a_oneway_request() -> None:
    assert _answer_flagged("conformant-full-send-queue.jsonl", "[OVERLOAD]", {"oneway": True})
    assert _answer_flagged("conformant-full-send-queue.jsonl", "None", {"oneway": True})
    assert _answer_flagged("conformant-slow-disk.jsonl", "[REJECTREQUEST]", {"oneway": True})
    assert not _answer_flagged("conformant-full-send-queue.jsonl", "[TIMEOUT_CLEAN_QUEUE]", {"oneway": True})


def test_pc_synchronized_goes_only_to_a_send_and_never_to_a_consumer_send_back() -> None:
    assert _answer_flagged("conformant-slow-disk.jsonl", "[PC_SYNCHRONIZED]", {"code": int(RequestCode.CONSUMER_SEND_MSG_BACK)})
    assert _answer_flagged("conformant-slow-disk.jsonl", "[PC_SYNCHRONIZED]", {"code": int(RequestCode.HEART_BEAT)})
    assert _answer_flagged("conformant-slow-disk.jsonl", "[REJECTREQUEST]", {"code": int(RequestCode.HEART_BEAT)})


def test_the_dispatchers_refusals_reach_a_oneway_request_only_before_5_1_0() -> None:
    send = int(RequestCode.SEND_MESSAGE)
    facts = {"dispatch_answers_oneway": True, "commit_log_codes": frozenset({send})}
    assert answer_goes_to(REJECT_REQUEST_REMARK, send, True, facts)
    assert answer_goes_to(" request type 99999 not supported", 99999, True, facts)
    assert not answer_goes_to(OVERLOAD_REMARK, send, True, facts)
    assert not answer_goes_to(None, send, True, facts)
    assert not answer_goes_to(REJECT_REQUEST_REMARK, send, True, {**facts, "dispatch_answers_oneway": False})


def test_only_a_send_the_release_registers_can_be_refused_as_busy() -> None:
    from spec.config import broker_config
    from spec.releases import profile
    from traces.checking.rules import header_facts
    from traces.format.records import Observation, TraceHeader

    def facts(release: str) -> dict[str, object]:
        return header_facts(TraceHeader("t", "test", "1", release, Observation.BLACK_BOX, broker_config(profile(release))))

    batch = int(RequestCode.SEND_BATCH_MESSAGE)  # registered from 4.1.0; in 4.0.0 the admin processor gets it
    assert not answer_goes_to(REJECT_REQUEST_REMARK, batch, False, facts("4.0.0"))
    assert answer_goes_to(REJECT_REQUEST_REMARK, batch, False, facts("4.1.0"))


# -- pcbusy_only_while_busy: spec.putlock.is_os_page_cache_busy, timeout < ts - beginTimeInLock < bound --


def _pcbusy_at(ts: int, lock_at: int | None) -> tuple[TraceHeader, list[Event]]:
    """slow-disk's header and a trace where (send, 0) takes the put lock at ``lock_at`` (never if None)
    and the fast failure drains a send task with ``[PCBUSY_CLEAN_QUEUE]`` at ``ts``: its only response."""
    header, _ = _example("conformant-slow-disk.jsonl")
    at = {"trace_id": header.trace_id}
    events: list[Event] = [{**at, "ts": 1, "kind": "RequestArrives", "io_thread": 0, "code": int(RequestCode.SEND_MESSAGE),
                            "topic": "t", "oneway": False, "request_id": 1}]
    if lock_at is not None:
        events.append({**at, "ts": lock_at, "kind": "WorkerAcquiresPutLock", "executor": "send", "worker": 0})
    events.append({**at, "ts": ts, "kind": "FastFailureDrainsBusySendQueue",
                   "responses": [{"request_id": 1, "code": int(ResponseCode.SYSTEM_BUSY), "remark": pcbusy_remark(ts - 1, 0)}]})
    return header, events


def test_page_cache_busy_holds_strictly_between_the_timeout_and_the_upper_bound() -> None:
    header, _ = _example("conformant-slow-disk.jsonl")
    timeout = header.config.os_page_cache_busy_timeout_ms
    for held, busy in [(timeout, False), (timeout + 1, True), (BUSY_UPPER_BOUND_MS - 1, True), (BUSY_UPPER_BOUND_MS, False)]:
        flagged = _flagged(*_pcbusy_at(100 + held, lock_at=100), "pcbusy_only_while_busy")
        assert flagged == [set() if busy else {3}] * len(flagged), (held, busy)


def test_a_pcbusy_answer_before_any_writer_took_the_lock_is_flagged() -> None:
    # beginTimeInLock starts at 0 (not busy), and the answer is the trace's only response.
    flagged = _flagged(*_pcbusy_at(500, lock_at=None), "pcbusy_only_while_busy")
    assert flagged and flagged == [{2}] * len(flagged)


def test_the_busy_answers_are_not_judged_at_black_box_where_the_lock_is_not_seen() -> None:
    header, events = _pcbusy_at(500, lock_at=None)
    full = [header_record(header), *({**e, "seq": i} for i, e in enumerate(events, 1))]
    blind = list(project(full, Observation.BLACK_BOX))
    assert [e["kind"] for e in blind[1:]] == ["RequestArrives", "Response"]
    finding = scan_trace(header_from_record(blind[0]), events_table(blind[1:]))["pcbusy_only_while_busy"]
    assert (finding.checked, finding.violations) == (0, 0)


def _reused_opaque(after_answer: bool) -> tuple[TraceHeader, list[Event], int]:
    """conformant-5.3.3 with a second arrival of an answered request's opaque, inserted just before or
    just after that answer; and the index of the answer."""
    header, events = _example("conformant-5.3.3.jsonl")
    answer = _index(events, lambda e: e["kind"] == "WorkerProcessesRequest" and bool(e["responses"]))
    opaque = events[answer]["responses"][0]["request_id"]
    request = events[_index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)]
    if after_answer:
        events.insert(answer + 1, {**request, "ts": events[answer]["ts"]})
    else:
        events.insert(answer, {**request, "ts": events[answer]["ts"]})
        answer += 1
    return header, events, answer


def test_an_answer_is_matched_with_every_arrival_of_its_opaque_and_one_arriving_after_it_is_flagged() -> None:
    header, events, answer = _reused_opaque(after_answer=True)
    assert all(answer + 1 in seqs for seqs in _flagged(header, events, "no_response_before_its_request"))


def test_an_answer_after_every_arrival_of_its_opaque_is_not_flagged() -> None:
    header, events, answer = _reused_opaque(after_answer=False)
    assert all(answer + 1 not in seqs for seqs in _flagged(header, events, "no_response_before_its_request"))


def test_an_answer_before_a_later_arrival_of_its_opaque_names_that_arrival() -> None:
    header, events, answer = _reused_opaque(after_answer=True)
    numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    sample = scan_trace(header, events_table(numbered))["no_response_before_its_request"].sample
    opaque = events[answer]["responses"][0]["request_id"]
    assert sample == [(answer + 1, f"response to opaque {opaque} at seq {answer + 1}; its request arrived at seq {answer + 2}")]


def test_an_answer_carried_by_its_own_requests_arrival_is_flagged() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    answer = _index(events, lambda e: e["kind"] == "WorkerProcessesRequest" and bool(e["responses"]))
    opaque = events[answer]["responses"][0]["request_id"]
    request = _index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)
    events[request] = {**events[request], "responses": events[answer]["responses"]}
    events[answer] = {**events[answer], "responses": []}
    assert all(request + 1 in seqs for seqs in _flagged(header, events, "no_response_before_its_request"))


def test_answers_in_traces_of_two_arrivals_one_or_none_are_matched_with_their_own() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    answer = _index(events, lambda e: e["kind"] == "WorkerProcessesRequest" and bool(e["responses"]))
    opaque = events[answer]["responses"][0]["request_id"]
    request = _index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)
    arrives, answers = events[request], events[answer]
    stranger = {**answers, "responses": [{**answers["responses"][0], "request_id": opaque + 1000}]}
    cases = [
        ([arrives, answers], set()),  # one arrival, answered after it
        ([arrives, answers, stranger], {3}),  # and an answer to an opaque above it that never arrived
        ([answers], {1}),  # no arrival at all
        ([arrives, stranger, {**arrives, "request_id": opaque + 1000}], {2}),  # the last arrival (highest opaque) came too late
    ]
    for trace, flagged in cases:
        assert all(seqs == flagged for seqs in _flagged(header, trace, "no_response_before_its_request")), trace


def _answered_twice(oneway: bool | None) -> tuple[TraceHeader, list[Event], int, int]:
    """conformant-5.3.3 with its first answered request marked ``oneway`` and answered a second time."""
    header, events = _example("conformant-5.3.3.jsonl")
    answer = _index(events, lambda e: e["kind"] == "WorkerProcessesRequest" and bool(e["responses"]))
    opaque = events[answer]["responses"][0]["request_id"]
    request = _index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)
    events[request] = {**events[request], "oneway": oneway}
    events.insert(answer + 1, events[answer])
    return header, events, request, opaque


def test_a_request_answered_twice_is_named_with_its_oneway_flag() -> None:
    for oneway, said in ((True, "true"), (None, "none"), (False, "false")):
        header, events, request, opaque = _answered_twice(oneway)
        numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
        sample = scan_trace(header, events_table(numbered))["each_request_is_answered_exactly_once"].sample
        code = events[request]["code"]
        assert (request + 1, f"opaque {opaque} (code {code}, oneway {said}) got 2 responses") in sample


def test_a_wrong_answer_names_its_request_even_at_the_traces_first_event_and_a_stray_one_names_none() -> None:
    header, events = _example("conformant-5.3.3.jsonl")
    answer = _index(events, lambda e: e["kind"] == "WorkerProcessesRequest" and bool(e["responses"]))
    opaque = events[answer]["responses"][0]["request_id"]
    request = _index(events, lambda e: e["kind"] == "RequestArrives" and e["request_id"] == opaque)
    del events[:request]  # the answered request is row 0
    answer -= request
    events[0] = {**events[0], "oneway": True}
    wrong = {**events[answer]["responses"][0], "code": 12345}
    events[answer] = {**events[answer], "responses": [wrong]}
    events.append({**events[answer], "responses": [{**wrong, "request_id": 999999}]})  # to a request that never arrived
    numbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    sample = scan_trace(header, events_table(numbered))[RESPONSES].sample
    code, remark = events[0]["code"], wrong["remark"]
    assert sample == [(answer + 1, f"opaque {opaque} (code {code}, oneway True): answered code 12345 remark {remark}"),
                      (len(events), f"opaque 999999 (code ?, oneway False): answered code 12345 remark {remark}")]


# -- hand-built traces: a few requests on full-send-queue's broker (5.3.3; send capacity 4, admin 16) ------

SEND, ADMIN = int(RequestCode.SEND_MESSAGE), 28  # routed to the send and to the admin executor
FIFO, CAPACITY, LIMITER = "fifo_service_per_queue", "no_queue_over_capacity", "limiter_decisions_as_the_bucket_says"
TIMEOUT = "timeout_only_after_the_queue_wait"
LIMITED = "conformant-retry-storm-limited.jsonl"  # the limiter on: 20,000 qps, the breaker open for 20 ms


def _header(example: str = "conformant-full-send-queue.jsonl", **changes: Any) -> TraceHeader:
    """``example``'s header with ``changes`` made to its broker config."""
    header, _ = _example(example)
    return replace(header, config=replace(header.config, **changes))


def _request(opaque: int, *steps: str, code: int = SEND, io: int = 0, ts: int = 1, topic: str | None = "t", oneway: bool = False) -> list[Event]:
    """Request ``opaque`` arrives on remoting thread ``io`` at ``ts``, then that thread's dispatch ``steps`` (event kinds)."""
    at = {"trace_id": "t", "ts": ts}
    arrives = {**at, "kind": "RequestArrives", "io_thread": io, "code": code, "topic": topic, "oneway": oneway, "request_id": opaque}
    return [arrives, *({**at, "kind": step, "io_thread": io} for step in steps)]


def _answering(kind: str, opaque: int, ts: int = 1, remark: str = "x", **fields: Any) -> Event:
    """A ``kind`` event at ``ts`` with one SYSTEM_BUSY answer to ``opaque``."""
    return {"trace_id": "t", "ts": ts, "kind": kind, **fields, "responses": [{"request_id": opaque, "code": int(ResponseCode.SYSTEM_BUSY), "remark": remark}]}


def _judged(header: TraceHeader, events: list[Event], rule: str) -> tuple[int, int, list[tuple[int, str]]]:
    """``rule``'s (checked, violations, sample), on which the array scan and the oracle agree."""
    scanned, *followed = _findings(header, events, rule)
    assert all(f == scanned for f in followed), (scanned, followed)
    return scanned


QUEUED = ("DispatchCreatesTask", "DispatchQueuesTask")
STARTED = ("DispatchCreatesTask", "DispatchStartsWorker")


def test_a_request_queued_at_the_traces_first_event_is_the_head_a_drain_takes() -> None:
    header = _header()
    events = [*_request(1, *QUEUED), _answering("FastFailureDrainsBusySendQueue", 1)]
    assert _judged(header, events, FIFO) == (1, 0, [])
    assert _judged(header, events, CAPACITY) == (1, 0, [])
    assert list(_scan(header, events).depth["send"]) == [0, 0, 1, 0]  # empty before the queue's first event


def test_a_wrong_head_names_the_request_the_queue_held_or_none_for_an_internal_task() -> None:
    internal = {"trace_id": "t", "ts": 1, "kind": "InternalTaskSubmitted", "executor": "send"}
    events = [internal, *_request(1, *QUEUED), _answering("FastFailureDrainsBusySendQueue", 1), _answering("FastFailureDrainsBusySendQueue", 2)]
    assert _judged(_header(), events, FIFO) == (2, 2, [(5, "send queue head is opaque None, the answer went to opaque 1"),
                                                       (6, "send queue head is opaque 1, the answer went to opaque 2")])


def test_a_response_on_a_dropped_foreign_element_is_not_fifos_to_judge() -> None:
    """A drop answers no request (spec.fastfailure.fast_failure_drops_foreign_element): a response on it
    is the answer rules' to judge; FIFO judges only the heads that drains and cleans answer."""
    events = [*_request(1, *QUEUED), _answering("FastFailureDropsForeignElement", 2)]
    assert _judged(_header(), events, FIFO) == (0, 0, [])


def test_every_queue_is_judged_when_the_first_has_no_events_and_an_unbounded_one_holds_any_number() -> None:
    def admin(capacity: int | None) -> TraceHeader:
        executors = _header().config.executors
        return _header(executors=tuple(replace(e, capacity=capacity) if e.name.value == "admin" else e for e in executors))

    events = [*_request(1, *QUEUED, code=ADMIN), *_request(2, *QUEUED, code=ADMIN)]
    assert _judged(admin(1), events, CAPACITY) == (2, 1, [(6, "admin queue holds 2 > capacity 1")])
    assert _judged(admin(None), events, CAPACITY) == (2, 0, [])


def test_a_worker_answers_the_request_it_was_started_with_or_took_whatever_its_index() -> None:
    header = _header()
    started = [*_request(1, *STARTED), *_request(2, *STARTED), _answering("WorkerProcessesRequest", 2, executor="send", worker=0),
               _answering("WorkerProcessesRequest", 1, executor="send", worker=1)]
    assert _judged(header, started, FIFO) == (2, 2, [(7, "worker ('send', 0) took opaque 1 but answered opaque 2"),
                                                     (8, "worker ('send', 1) took opaque 2 but answered opaque 1")])
    taken = [*_request(1, *QUEUED), {"trace_id": "t", "ts": 1, "kind": "WorkerTakesTask", "executor": "send", "worker": 1},
             _answering("WorkerProcessesRequest", 2, executor="send", worker=1)]
    assert _judged(header, taken, FIFO) == (1, 1, [(5, "worker ('send', 1) took opaque 1 but answered opaque 2")])


def test_a_timeout_answer_is_judged_by_the_latest_creation_of_its_task_and_flagged_without_one() -> None:
    header = _header()  # the send queue's wait is 50 ms
    admin = _request(1, *QUEUED, code=ADMIN)
    twice = [*_request(2, "DispatchCreatesTask", ts=1), *_request(2, *QUEUED, ts=3)[1:]]  # created at ts 1, then again at ts 3
    clean = _answering("FastFailureCleansExpiredHead", 2, ts=60, remark=timeout_remark(57, 0), queue="send")
    assert _judged(header, [*admin, *twice, clean], TIMEOUT) == (1, 0, [])
    never = [*_request(2, "DispatchQueuesTask"), clean]
    assert _judged(header, never, TIMEOUT) == (1, 1, [(3, "[TIMEOUT_CLEAN_QUEUE] answer for a task with no creation time or an "
                                                         f"unparsable remark {timeout_remark(57, 0)!r}")])


def test_an_answer_to_a_reused_opaque_is_judged_against_its_first_arrival_among_many() -> None:
    """Seventeen arrivals of opaque 7, then seventeen of opaque 3 (the first two-way, the rest oneway): the
    [OVERLOAD] answer to 3 goes to its first arrival, a two-way request. (An unstable sort of the opaques
    picks another arrival of 3 here.)"""
    sevens = [e for io in range(17) for e in _request(7, io=io)]
    threes = [e for io in range(17) for e in _request(3, io=io, oneway=io > 0)]
    answer = {**_answering("Response", 3), "responses": [{"request_id": 3, "code": int(ResponseCode.SYSTEM_BUSY), "remark": OVERLOAD_REMARK}]}
    assert _judged(_header(), [*sevens, *threes, answer], RESPONSES) == (1, 0, [])


def test_a_limiter_decision_with_the_limiter_off_or_no_request_on_its_thread_is_flagged_and_says_which() -> None:
    assert _judged(_header(), _request(1, "RateLimitHandlerAdmits"), LIMITER) == (1, 1, [(2, "RateLimitHandlerAdmits with the limiter off")])
    alone = [{"trace_id": "t", "ts": 1, "kind": "RateLimitHandlerThrottles", "io_thread": 0}]
    assert _judged(_header(LIMITED), alone, LIMITER) == (
        1, 1, [(1, "RateLimitHandlerThrottles with the limiter on but no request on that thread")])


def test_a_request_without_a_topic_shares_the_bucket_of_the_topic_named_empty() -> None:
    """At 20,000 qps a second decision in the same millisecond waits 50 µs, which opens the breaker."""
    header = _header(LIMITED)
    shared = [*_request(1, "RateLimitHandlerAdmits", topic=""), *_request(2, "RateLimitHandlerThrottles", io=1, topic=None)]
    assert _judged(header, shared, LIMITER) == (2, 0, [])
    admitted = [*shared[:3], {**shared[3], "kind": "RateLimitHandlerAdmits"}]
    flagged = (2, 1, [(4, "topic '' at ts 1: the bucket throttles, the trace RateLimitHandlerAdmits")])
    assert _judged(header, admitted, LIMITER) == flagged
    assert _judged(header, [*_request(1, "RateLimitHandlerAdmits", topic=None), *admitted[2:]], LIMITER) == flagged  # no topic '' in the trace


def _decisions(*decided: tuple[int, str]) -> list[Event]:
    """One request per (ts, limiter step), each on its own remoting thread, all of topic t."""
    return [e for io, (ts, step) in enumerate(decided) for e in _request(io + 1, step, io=io, ts=ts)]


def test_the_breaker_is_followed_to_the_last_decision_and_across_a_clock_that_goes_back() -> None:
    admits, throttles = "RateLimitHandlerAdmits", "RateLimitHandlerThrottles"
    # The second decision opens the breaker until 20.1 ms on the bucket's clock: a decision 10 ms back
    # in time is throttled, and one 21 ms after the first finds it closed again.
    back = _decisions((100, admits), (100, throttles), (90, throttles), (121, admits))
    assert _judged(_header(LIMITED), back, LIMITER) == (4, 0, [])
    # With no open time, the breaker a decision 0.5 s back in time opens closes at the latest time seen so far.
    rate_limit = replace(_header(LIMITED).config.rate_limit, circuit_breaker_open_micros=0)
    corner = _decisions((1, admits), (1001, admits), (501, throttles), (1001, admits))
    assert _judged(_header(LIMITED, rate_limit=rate_limit), corner, LIMITER) == (4, 0, [])


def test_a_timeout_answer_from_a_queue_fast_failure_does_not_clean_is_flagged() -> None:
    """4.3.2's BrokerFastFailure cleans send, pull, heartbeat and endTransaction only: its admin queue has no
    wait to time out after (the scan once failed with a KeyError on such a trace)."""
    from spec.config import broker_config
    from spec.releases import profile

    header = TraceHeader("t", "test", "1", "4.3.2", Observation.FULL, broker_config(profile("4.3.2")))
    remark = timeout_remark(599, 0)
    events = [*_request(1, *QUEUED, code=ADMIN), _answering("FastFailureCleansExpiredHead", 1, ts=600, remark=remark, queue="admin")]
    assert _judged(header, events, TIMEOUT) == (
        1, 1, [(4, "[TIMEOUT_CLEAN_QUEUE] answer from the admin queue, which release 4.3.2's fast failure does not clean")])


def test_a_wrong_answer_without_a_remark_says_its_remark_is_null() -> None:
    ok = {**_answering("Response", 1), "responses": [{"request_id": 1, "code": int(ResponseCode.SUCCESS), "remark": None}]}
    events = [*_request(1, oneway=True), ok]  # a processor's answer never goes to a oneway request
    assert _judged(_header(), events, RESPONSES) == (1, 1, [(2, f"opaque 1 (code {SEND}, oneway True): answered code 0 remark null")])


def test_an_unparsable_pcbusy_remark_is_not_the_busy_rules_to_judge() -> None:
    """Only a remark spec.codes parses as [PCBUSY_CLEAN_QUEUE] is judged against the page cache; a garbled one
    is a wrong remark, responses_carry_the_profile_codes_and_remarks's to flag."""
    header, events = _pcbusy_at(500, lock_at=None)
    garbled = {**events[-1]["responses"][0], "remark": "[PCBUSY_CLEAN_QUEUE]broker busy, but no period"}
    events[-1] = {**events[-1], "responses": [garbled]}
    assert _judged(header, events, "pcbusy_only_while_busy") == (0, 0, [])
    assert _judged(header, events, RESPONSES)[1] == 1


# -- a request routed to an executor the config lacks ----------------------------------------------------


def test_requests_for_an_executor_the_config_lacks_are_in_no_queue(tmp_path: Path) -> None:
    """A trace of every request code, judged under its config without the query executor (the
    admin executor moved third): the query requests are routed to no queue of the config's, so
    each take by a query worker is flagged as leaving an empty queue, and no other queue's FIFO,
    capacity or timeouts count them."""
    from traces.format.read import read_records
    from traces.recording.record import record_workload

    record_workload(tmp_path / "every.jsonl", "every-code", "5.3.3", 400)
    rows = [r.data for r in read_records([str(tmp_path / "every.jsonl")])]
    config = rows[0]["config"]
    executors = {e["name"]: e for e in config["executors"]}
    assert "query" in executors and config["executors"][2]["name"] != "admin"
    kept = ["send", "pull", "admin", *(n for n in executors if n not in ("send", "pull", "admin", "query"))]
    header = header_from_record({**rows[0], "config": {**config, "executors": [executors[n] for n in kept]}})
    events = rows[1:]
    takes = [e["seq"] for e in events if e["kind"] == "WorkerTakesTask" and e["executor"] == "query"]
    assert takes
    found = scan_trace(header, events_table(events))
    assert {name: f.violations for name, f in found.items() if f.violations} == {"fifo_service_per_queue": len(takes)}
    assert found["fifo_service_per_queue"].sample == [(s, "query queue is empty, yet an element left it") for s in takes][:len(found["fifo_service_per_queue"].sample)]
