"""What the wire alone rules out (traces/checking/necessary.py): each condition flags the event that
breaks it and nothing else, no run of the reference broker breaks any, and a trace that breaks one
is a violation of the partial replay without a search of its whole length."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec.codes import OVERLOAD_REMARK, PC_SYNCHRONIZED_REMARK, REJECT_REQUEST_REMARK, RequestCode, ResponseCode, pcbusy_remark, timeout_remark
from spec.config import BrokerConfig
from spec.machine import Environment
from spec.profiles import ExecutorName
from traces.checking.necessary import Impossible, first_impossible
from traces.checking.partial import Budgets, replay_partial
from traces.checking.replay import replay_records
from traces.format.project import project
from traces.format.read import raw_records
from traces.format.records import UNDECLARED_ENVIRONMENT, Observation, header_from_record
from traces.recording.examples import EXAMPLES
from traces.recording.record import WORKLOADS, record_workload

QUIET = UNDECLARED_ENVIRONMENT  # what a trace that declares no environment may do unseen: an exception inside the put lock
SEND, ADMIN = RequestCode.SEND_MESSAGE, RequestCode.GET_BROKER_RUNTIME_INFO


def _config(profile: str = "5.3.3", **changes: Any) -> BrokerConfig:
    """The config of the bundled 5.3.3 example (send queue capacity 16, send wait 50 ms, busy after 20 ms), changed."""
    (_, first), *_ = raw_records(EXAMPLES / f"conformant-{profile}.jsonl")
    return dataclasses.replace(header_from_record(first).config, **changes)


def _arrive(ts: int, opaque: int, code: int = SEND) -> dict[str, Any]:
    return {"kind": "RequestArrives", "ts": ts, "request_id": opaque, "code": code, "oneway": False, "topic": "TopicTest"}


def _answer(ts: int, opaque: int, remark: str | None, code: int = ResponseCode.SYSTEM_BUSY) -> dict[str, Any]:
    return {"kind": "Response", "ts": ts, "responses": [{"request_id": opaque, "code": int(code), "remark": remark}]}


def _flagged(config: BrokerConfig, events: list[dict[str, Any]], environment: Environment = QUIET) -> tuple[int, str] | None:
    found = _found(config, events, environment)
    return None if found is None else (found.seq, found.claim)


def _found(config: BrokerConfig, events: list[dict[str, Any]], environment: Environment = QUIET) -> Impossible | None:
    return first_impossible(config, environment, [{**e, "seq": i} for i, e in enumerate(events, 1)])


# -- a busy store -----------------------------------------------------------------------------------


def test_a_busy_answer_needs_a_writer_that_arrived_more_than_the_timeout_before_and_is_unanswered() -> None:
    config = _config(os_page_cache_busy_timeout_ms=20)
    busy = ("PC_SYNC", ResponseCode.SYSTEM_BUSY)
    events = [_arrive(1, 1), _arrive(21, 2), _answer(22, 2, PC_SYNCHRONIZED_REMARK, busy[1])]
    assert _flagged(config, events) is None  # request 1 may have stamped at ts 1: 22 - 1 > 20
    late = [_arrive(2, 1), _arrive(21, 2), _answer(22, 2, PC_SYNCHRONIZED_REMARK, busy[1])]
    assert _flagged(config, late) == (3, "responses_carry_the_profile_code_and_remark")  # 22 - 2 = 20 is not more than 20
    answered = [_arrive(1, 1), _answer(5, 1, None, ResponseCode.SUCCESS), _arrive(21, 2), _answer(22, 2, PC_SYNCHRONIZED_REMARK, busy[1])]
    assert _flagged(config, answered) == (4, "responses_carry_the_profile_code_and_remark")
    not_a_writer = [_arrive(1, 1, ADMIN), _arrive(21, 2), _answer(22, 2, PC_SYNCHRONIZED_REMARK, busy[1])]
    assert _flagged(config, not_a_writer) == (3, "responses_carry_the_profile_code_and_remark")


def test_a_writer_that_threw_inside_the_lock_keeps_the_store_busy_only_where_finally_does_not_reset() -> None:
    events = [_arrive(1, 1), _answer(5, 1, "boom", ResponseCode.SYSTEM_ERROR), _arrive(30, 2), _answer(30, 2, REJECT_REQUEST_REMARK)]
    assert _flagged(_config("5.3.3"), events) is None  # 5.3.3 leaves beginTimeInLock stuck
    assert _flagged(_config("4.9.8"), events) == (4, "reject_request_answers_only_while_busy_or_deficient")  # 4.9.8 resets it in finally


def test_rejectrequest_needs_busy_only_while_the_pool_cannot_run_dry() -> None:
    events = [_arrive(1, 1), _answer(1, 1, REJECT_REQUEST_REMARK)]
    assert _flagged(_config(), events) == (2, "reject_request_answers_only_while_busy_or_deficient")
    pooled = _config(transient_store_pool_enable=True, transient_store_pool_size=0)
    assert pooled.pool_enabled
    assert _flagged(pooled, events) is None  # a pool of none is deficient from the start


def test_a_deficient_pool_needs_a_writer_inside_the_lock_for_each_message_of_its_filled_files_and_one_more() -> None:
    pooled = _config(transient_store_pool_enable=True, transient_store_pool_size=3, mapped_file_size=2)  # 2 files of 2 filled, 1 created
    enough = [_arrive(1, i) for i in range(1, 6)] + [_arrive(1, 6), _answer(1, 6, REJECT_REQUEST_REMARK)]
    assert _flagged(pooled, enough) is None
    assert _flagged(pooled, enough[1:]) == (6, "reject_request_answers_only_while_busy_or_deficient")  # 4 writers are one short
    assert _flagged(pooled, [_arrive(1, 9, ADMIN), *enough[1:]]) == (7, "reject_request_answers_only_while_busy_or_deficient")  # an admin request writes nothing
    one = _config(transient_store_pool_enable=True, transient_store_pool_size=1, mapped_file_size=2)
    assert _flagged(one, [_arrive(1, 1), _arrive(1, 2), _answer(1, 2, REJECT_REQUEST_REMARK)]) is None  # request 1 created the only file
    assert _flagged(one, [_arrive(1, 2), _answer(1, 2, REJECT_REQUEST_REMARK)]) == (2, "reject_request_answers_only_while_busy_or_deficient")


def test_a_writer_answered_with_a_code_no_lock_holder_gets_never_borrowed_a_buffer() -> None:
    one = _config(transient_store_pool_enable=True, transient_store_pool_size=1)
    refused = [_arrive(1, 1), _arrive(1, 2), _answer(1, 1, REJECT_REQUEST_REMARK), _answer(1, 2, REJECT_REQUEST_REMARK)]
    assert _flagged(one, refused) == (4, "reject_request_answers_only_while_busy_or_deficient")  # 1 was refused: it never took the lock
    for code in (ResponseCode.SUCCESS, ResponseCode.SYSTEM_ERROR):  # a writer that appended, or threw inside the lock
        assert _flagged(one, [*refused[:2], _answer(1, 1, None, code), refused[3]]) is None


def test_a_writer_a_cleaner_answered_never_stamped_the_lock() -> None:
    config = _config(os_page_cache_busy_timeout_ms=20)
    cleaned = [_arrive(1, 1), _answer(60, 1, timeout_remark(50, 0)), _arrive(80, 2), _answer(100, 2, PC_SYNCHRONIZED_REMARK, config.profile.pc_synchronized_code)]
    assert _flagged(config, cleaned) == (4, "responses_carry_the_profile_code_and_remark")
    threw = [cleaned[0], _answer(60, 1, None, ResponseCode.SYSTEM_ERROR), *cleaned[2:]]
    assert _flagged(config, threw) is None  # 5.3.3: an exception inside the lock may leave the stamp


def test_a_page_cache_busy_drain_needs_a_busy_store() -> None:
    events = [_arrive(1, 1), _answer(15, 1, pcbusy_remark(14, 0))]  # the drained send is the only writer
    assert _flagged(_config(os_page_cache_busy_timeout_ms=13), events) is None  # 15 - 1 > 13
    assert _flagged(_config(os_page_cache_busy_timeout_ms=14), events) == (2, "pcbusy_answers_only_while_busy")


def test_a_drained_request_that_writes_nothing_leaves_no_writer_to_make_the_store_busy() -> None:
    config = _config(os_page_cache_busy_timeout_ms=13)
    recall = RequestCode.RECALL_MESSAGE  # goes to the send queue in 5.3.3, but does not write the commit log
    assert not config.profile.writes_commit_log(recall)
    events = [_arrive(1, 1, recall), _answer(15, 1, pcbusy_remark(14, 0))]
    assert _flagged(config, events) == (2, "pcbusy_answers_only_while_busy")
    assert _flagged(config, [_arrive(1, 2), *events]) is None  # a send that arrived with it may hold the lock


def test_a_send_backs_busy_status_needs_a_busy_store_too() -> None:
    config = _config(os_page_cache_busy_timeout_ms=20)
    back = RequestCode.CONSUMER_SEND_MSG_BACK
    assert config.profile.writes_commit_log(back)
    status = config.profile.page_cache_busy_status
    events = [_arrive(1, 1, back), _answer(2, 1, status, ResponseCode.SYSTEM_ERROR)]
    assert _flagged(config, events) == (2, "responses_carry_the_profile_code_and_remark")
    assert _flagged(config, [_arrive(1, 1, back), _answer(2, 1, PC_SYNCHRONIZED_REMARK, config.profile.pc_synchronized_code)]) is None


def test_the_details_say_what_the_event_needed() -> None:
    config = _config(os_page_cache_busy_timeout_ms=20)
    too_early = _found(config, [_arrive(1, 1), _answer(21, 1, PC_SYNCHRONIZED_REMARK, config.profile.pc_synchronized_code)])
    assert too_early is not None and too_early.detail == (
        "opaque 1: the store must be busy at ts 21 (beginTimeInLock more than 20 ms before), but the broker started at ts 1"
    )
    none_left = _found(config, [_arrive(1, 1), _answer(2, 1, None, ResponseCode.SUCCESS), _arrive(5, 2), _answer(22, 2, PC_SYNCHRONIZED_REMARK, config.profile.pc_synchronized_code)])
    assert none_left is not None and none_left.detail == (
        "opaque 2: the store must be busy at ts 22 (beginTimeInLock more than 20 ms before), but no writer of the commit log that arrived by ts 1 was still unanswered"
    )
    small = _config(executors=tuple(dataclasses.replace(e, capacity=2) for e in config.executors))
    overload = _found(small, [_arrive(1, 1), _arrive(2, 2), _answer(2, 2, OVERLOAD_REMARK)])
    assert overload is not None and overload.detail == "opaque 2: [OVERLOAD] needs the send queue full (2 tasks), but only 1 request(s) routed there were unanswered"
    foreign = dataclasses.replace(QUIET, foreign_tasks=(ExecutorName.SEND,), max_foreign_tasks=1)
    with_foreign = first_impossible(small, foreign, [{**e, "seq": i} for i, e in enumerate([_arrive(2, 2), _answer(2, 2, OVERLOAD_REMARK)], 1)])
    assert with_foreign is not None and with_foreign.detail.endswith("but only 0 request(s) routed there were unanswered (and at most 1 foreign task(s))")


# -- a cleaner's remark -----------------------------------------------------------------------------


def test_a_timeout_remarks_period_lies_between_the_queue_wait_and_the_time_since_arrival() -> None:
    config = _config()  # send wait 50 ms
    assert _flagged(config, [_arrive(10, 1), _answer(60, 1, timeout_remark(50, 0))]) is None
    assert _flagged(config, [_arrive(10, 1), _answer(60, 1, timeout_remark(51, 0))]) == (2, "timeout_answers_only_after_the_queue_wait")
    assert _flagged(config, [_arrive(10, 1), _answer(70, 1, timeout_remark(49, 0))]) == (2, "timeout_answers_only_after_the_queue_wait")


def test_an_operator_may_have_shortened_the_wait_where_the_trace_or_the_environment_says_so() -> None:
    config = _config()
    short = [_arrive(10, 1), _answer(70, 1, timeout_remark(30, 0))]
    assert _flagged(config, short) is not None
    changed = [_arrive(10, 1), {"kind": "OperatorSetsQueueWait", "ts": 20, "queue": "send", "wait_ms": 30}, _answer(70, 1, timeout_remark(30, 0))]
    assert _flagged(config, changed) is None
    assert _flagged(config, short, dataclasses.replace(QUIET, queue_wait_changes=((ExecutorName.SEND, 30),))) is None


def test_a_queue_without_a_wait_is_never_cleaned_for_time_unless_an_operator_gives_it_one() -> None:
    config = _config(queue_waits=((ExecutorName.SEND, 50),))
    cleaned = [_arrive(1, 1, ADMIN), _answer(900, 1, timeout_remark(800, 0))]
    assert _flagged(config, cleaned) == (2, "timeout_answers_only_after_the_queue_wait")
    assert _flagged(config, [cleaned[0], {"kind": "OperatorSetsQueueWait", "ts": 5, "queue": "admin", "wait_ms": 700}, cleaned[1]]) is None


def test_a_request_that_goes_to_no_executor_is_never_cleaned() -> None:
    config = _config(default_processor_registered=False)
    unknown = 99_999
    assert _flagged(config, [_arrive(1, 1, unknown), _answer(900, 1, timeout_remark(800, 0))]) == (2, "timeout_answers_only_after_the_queue_wait")


def test_a_cleaners_remark_leaves_at_most_the_capacity_less_one() -> None:
    config = _config(executors=tuple(dataclasses.replace(e, capacity=3) if e.name is ExecutorName.SEND else e for e in _config().executors))
    assert _flagged(config, [_arrive(10, 1), _answer(70, 1, timeout_remark(60, 2))]) is None
    assert _flagged(config, [_arrive(10, 1), _answer(70, 1, timeout_remark(60, 3))]) == (2, "no_queue_exceeds_its_capacity")


def test_a_cleaner_runs_only_from_the_first_scheduled_run_and_with_the_switch_on() -> None:
    config = _config(os_page_cache_busy_timeout_ms=1)
    first = config.start_time_ms + config.fast_failure_initial_delay_ms
    before = [_arrive(1, 1), _arrive(1, 2), _answer(first - 1, 2, pcbusy_remark(first - 2, 0))]
    assert _flagged(config, before) == (3, "fast_failure_runs_10ms_apart_while_enabled")
    assert _flagged(config, [*before[:2], _answer(first, 2, pcbusy_remark(first - 1, 0))]) is None
    off = dataclasses.replace(config, fast_failure_enable=False)
    assert off.profile.fast_failure_switch
    assert _flagged(off, [*before[:2], _answer(first, 2, pcbusy_remark(first - 1, 0))]) == (3, "fast_failure_runs_10ms_apart_while_enabled")
    toggled = {"kind": "OperatorSetsFastFailureEnable", "ts": 2, "enabled": True}
    assert _flagged(off, [*before[:2], toggled, _answer(first, 2, pcbusy_remark(first - 1, 0))]) is None
    turned_off = {**toggled, "enabled": False}
    assert _flagged(off, [*before[:2], turned_off, _answer(first, 2, pcbusy_remark(first - 1, 0))]) is not None
    late = [*before[:2], _answer(first, 2, pcbusy_remark(first - 1, 0))]
    assert _flagged(off, late, dataclasses.replace(QUIET, fast_failure_toggles=(True,))) is None
    assert _flagged(off, late, dataclasses.replace(QUIET, fast_failure_toggles=(False,))) is not None


def test_only_the_send_queue_is_drained_while_busy() -> None:
    config = _config(os_page_cache_busy_timeout_ms=1)
    events = [_arrive(1, 1), _arrive(1, 2, ADMIN), _answer(20, 2, pcbusy_remark(19, 0))]
    assert _flagged(config, events) == (3, "pcbusy_answers_only_while_busy")


# -- a full queue -----------------------------------------------------------------------------------


def test_overload_needs_as_many_unanswered_requests_of_that_executor_as_its_capacity() -> None:
    config = _config(executors=tuple(dataclasses.replace(e, capacity=2) for e in _config().executors))
    full = [_arrive(1, 1), _arrive(1, 2), _arrive(2, 3), _answer(2, 3, OVERLOAD_REMARK)]
    assert _flagged(config, full) is None
    answered = [_arrive(1, 1), _answer(1, 1, None, ResponseCode.SUCCESS), _arrive(1, 2), _arrive(2, 3), _answer(2, 3, OVERLOAD_REMARK)]
    assert _flagged(config, answered) == (5, "overload_answers_only_when_the_queue_is_full")
    elsewhere = [_arrive(1, 1, ADMIN), _arrive(1, 2), _arrive(2, 3), _answer(2, 3, OVERLOAD_REMARK)]
    assert _flagged(config, elsewhere) == (4, "overload_answers_only_when_the_queue_is_full")
    foreign = {"kind": "InternalTaskSubmitted", "ts": 1, "executor": "send"}
    assert _flagged(config, [*elsewhere[:2], foreign, *elsewhere[2:]]) is None
    assert _flagged(config, [*elsewhere[:2], {**foreign, "executor": "admin"}, *elsewhere[2:]]) is not None
    assert _flagged(config, elsewhere, dataclasses.replace(QUIET, foreign_tasks=(ExecutorName.SEND,), max_foreign_tasks=1)) is None
    assert _flagged(config, elsewhere, dataclasses.replace(QUIET, foreign_tasks=(ExecutorName.ADMIN,), max_foreign_tasks=1)) is not None


def test_each_foreign_task_the_trace_shows_takes_one_place_in_its_queue() -> None:
    config = _config(executors=tuple(dataclasses.replace(e, capacity=3) for e in _config().executors))
    foreign = {"kind": "InternalTaskSubmitted", "ts": 1, "executor": "send"}
    one = [_arrive(1, 1), foreign, _arrive(2, 3), _answer(2, 3, OVERLOAD_REMARK)]
    assert _flagged(config, one) == (4, "overload_answers_only_when_the_queue_is_full")
    assert _flagged(config, [one[0], foreign, foreign, *one[2:]]) is None
    pulled = {**foreign, "executor": "pull"}  # an executor this broker lacks: the task is in no queue
    assert _flagged(config, [one[0], foreign, pulled, *one[2:]]) == (5, "overload_answers_only_when_the_queue_is_full")


def test_an_executor_the_broker_lacks_is_not_judged() -> None:
    config = _config()
    pull = RequestCode.PULL_MESSAGE
    assert all(e.name is not ExecutorName.PULL for e in config.executors)
    assert _flagged(config, [_arrive(1, 1, pull), _answer(1, 1, OVERLOAD_REMARK)]) is None


def test_an_unbounded_queue_never_overloads() -> None:
    config = _config(executors=tuple(dataclasses.replace(e, capacity=None) for e in _config().executors))
    assert _flagged(config, [_arrive(1, 1), _answer(1, 1, OVERLOAD_REMARK)]) == (2, "overload_answers_only_when_the_queue_is_full")


def test_a_reused_opaque_names_its_latest_request() -> None:
    config = _config()
    events = [_arrive(1, 7), _answer(2, 7, None, ResponseCode.SUCCESS), _arrive(10, 7), _answer(70, 7, timeout_remark(60, 0))]
    assert _flagged(config, events) is None
    assert _flagged(config, [*events[:3], _answer(70, 7, timeout_remark(61, 0))]) == (4, "timeout_answers_only_after_the_queue_wait")


# -- a code no processor serves ---------------------------------------------------------------------


UNKNOWN = 99_999
NOT_SUPPORTED = (f" request type {UNKNOWN} not supported", ResponseCode.REQUEST_CODE_NOT_SUPPORTED)


def test_a_code_no_processor_serves_is_answered_not_supported_with_its_own_code() -> None:
    config = _config()
    assert not config.profile.has_processor_for(UNKNOWN) and UNKNOWN not in config.profile.admin_codes
    assert _flagged(config, [_arrive(1, 1, UNKNOWN), _answer(2, 1, *NOT_SUPPORTED)]) is None
    for remark, code in ((None, ResponseCode.SUCCESS), (NOT_SUPPORTED[0], ResponseCode.SUCCESS), (" request type 12 not supported", NOT_SUPPORTED[1])):
        assert _flagged(config, [_arrive(1, 1, UNKNOWN), _answer(2, 1, remark, code)]) == (2, "responses_carry_the_profile_code_and_remark")
    assert _flagged(config, [_arrive(1, 1, ADMIN), _answer(2, 1, *NOT_SUPPORTED)]) is None  # the admin processor's own answer is its business
    assert _flagged(config, [_arrive(1, 1, UNKNOWN), _answer(600, 1, timeout_remark(599, 0))]) is None  # flow control answers it too


def test_before_4_9_1_the_default_processor_answers_an_unknown_code_nothing() -> None:
    old = _config("4.3.2")
    assert not old.profile.admin_answers_unknown_code
    assert _flagged(old, [_arrive(1, 1, UNKNOWN), _answer(2, 1, *NOT_SUPPORTED)]) == (2, "responses_carry_the_profile_code_and_remark")
    bare = dataclasses.replace(old, default_processor_registered=False)  # the dispatch answers it, in every release
    assert _flagged(bare, [_arrive(1, 1, UNKNOWN), _answer(2, 1, *NOT_SUPPORTED)]) is None
    assert _flagged(bare, [_arrive(1, 1, UNKNOWN), _answer(2, 1, None, ResponseCode.SUCCESS)]) == (2, "responses_carry_the_profile_code_and_remark")


def test_an_unknown_code_for_a_broker_without_an_admin_executor_is_not_judged() -> None:
    config = _config()
    sends_only = dataclasses.replace(config, executors=tuple(e for e in config.executors if e.name is ExecutorName.SEND))
    assert _flagged(sends_only, [_arrive(1, 1, UNKNOWN), _answer(2, 1, None, ResponseCode.SUCCESS)]) is None


def test_the_details_of_the_new_conditions() -> None:
    pooled = _config(transient_store_pool_enable=True, transient_store_pool_size=3, mapped_file_size=2)
    short = _found(pooled, [_arrive(1, 1), _answer(1, 1, REJECT_REQUEST_REMARK)])
    assert short is not None and short.detail == (
        "opaque 1: the store must be busy at ts 1 (beginTimeInLock more than 20 ms before), but the broker started at ts 1;"
        " nor can the pool be deficient: lending its 3 buffers at once takes 5 writers inside the put lock"
        " (2 files of 2 messages filled, one more created), but only 0 other writer(s) had arrived that were not answered"
        " with a code no lock holder gets"
    )
    wrong = _found(_config(), [_arrive(1, 1, UNKNOWN), _answer(2, 1, None, ResponseCode.SUCCESS)])
    assert wrong is not None and wrong.detail == (
        "opaque 1: code 99999 has no processor, so it is answered 3 ' request type 99999 not supported' or by flow control, not 0 None"
    )
    silent = _found(_config("4.3.2"), [_arrive(1, 1, UNKNOWN), _answer(2, 1, *NOT_SUPPORTED)])
    assert silent is not None and silent.detail == (
        "opaque 1: code 99999 has no processor and 4.3.2's default processor answers it nothing, so only flow control"
        " answers it, not 3 ' request type 99999 not supported'"
    )


# -- a flow-control remark --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("remark", "profile", "code"),
    [
        (REJECT_REQUEST_REMARK, "5.3.3", ResponseCode.SYSTEM_BUSY),
        (OVERLOAD_REMARK, "5.3.3", ResponseCode.SYSTEM_BUSY),
        (timeout_remark(60, 0), "4.9.8", ResponseCode.SYSTEM_BUSY),
        ("[RateLimit] for TopicTest need wait:5microsecs", "5.3.3", ResponseCode.SYSTEM_BUSY),
        (PC_SYNCHRONIZED_REMARK, "5.3.3", ResponseCode.SYSTEM_BUSY),
        (PC_SYNCHRONIZED_REMARK, "4.9.8", ResponseCode.SYSTEM_ERROR),  # SYSTEM_ERROR up to 5.2.0
    ],
)
def test_a_flow_control_remark_comes_only_with_its_code_paths_code(remark: str, profile: str, code: ResponseCode) -> None:
    """Judged before what the answer needs of the broker: an unanswered writer that arrived long
    before makes the store possibly busy and any queue possibly cleaned, so only the code decides."""
    config = _config(profile, os_page_cache_busy_timeout_ms=20)
    for other in (ResponseCode.SUCCESS, ResponseCode.SYSTEM_ERROR, ResponseCode.SYSTEM_BUSY):
        events = [_arrive(1, 1), _arrive(100, 2), _answer(100, 2, remark, other)]
        claim = _flagged(config, events)
        if other == code:
            assert claim is None or claim[1] != "responses_carry_the_profile_code_and_remark", claim
        else:
            assert claim == (3, "responses_carry_the_profile_code_and_remark"), (other, claim)


def test_a_flow_control_tag_comes_only_in_its_code_paths_text() -> None:
    config = _config(os_page_cache_busy_timeout_ms=20)
    for remark in (REJECT_REQUEST_REMARK + "!", "[OVERLOAD]", "[TIMEOUT_CLEAN_QUEUE]broker busy", "[PC_SYNCHRONIZED]"):
        found = _found(config, [_arrive(1, 1), _arrive(100, 2), _answer(100, 2, remark)])
        assert found is not None and found.claim == "responses_carry_the_profile_code_and_remark", remark
        assert found.detail.endswith("and not with this text")
    found = _found(config, [_arrive(1, 1), _answer(2, 1, REJECT_REQUEST_REMARK, ResponseCode.SUCCESS)])
    assert found is not None and found.detail == (
        "opaque 1: '[REJECTREQUEST]system busy, start flow control for a while' is written only by its flow-control code path,"
        " with code 2 (SYSTEM_BUSY) in 5.3.3, not 0"
    )


# -- soundness, and the verdicts it gives ----------------------------------------------------------


def _recording(tmp_path: Path, workload: str, profile: str, steps: int, seed: int = 0) -> list[dict[str, Any]]:
    out = tmp_path / f"{workload}-{profile}-{seed}.jsonl"
    record_workload(out, workload, profile, steps, seed=seed)
    return [r for _, r in raw_records(out)]


@pytest.mark.parametrize("profile", ["4.3.2", "4.9.8", "5.3.3"])
def test_no_recording_of_the_reference_breaks_a_condition_at_any_level(tmp_path: Path, profile: str) -> None:
    for workload in WORKLOADS:
        records = _recording(tmp_path, workload, profile, 400)
        for level in (Observation.QUEUES, Observation.BLACK_BOX):
            projected = list(project(records, level))
            header = header_from_record(projected[0])  # the recording declares its workload's environment
            assert first_impossible(header.config, header.hidden_environment(), projected[1:]) is None, (workload, level)


@settings(max_examples=8, deadline=None)
@given(workload=st.sampled_from(sorted(WORKLOADS)), profile=st.sampled_from(["4.3.2", "4.9.8", "5.3.3"]), seed=st.integers(0, 10_000))
def test_no_random_run_of_the_reference_breaks_a_condition(tmp_path_factory: pytest.TempPathFactory, workload: str, profile: str, seed: int) -> None:
    records = _recording(tmp_path_factory.mktemp("rec"), workload, profile, 300, seed)
    projected = list(project(records, Observation.BLACK_BOX))
    header = header_from_record(projected[0])
    assert first_impossible(header.config, header.hidden_environment(), projected[1:]) is None


def test_a_pool_exhaustion_recording_needs_its_own_pool_and_no_larger(tmp_path: Path) -> None:
    """The pool's count is no vacuous bound: the recording's refusals pass on it (the store is not
    busy then), and the same answers under a header claiming two more buffers are ruled out."""
    projected = list(project(_recording(tmp_path, "pool-exhaustion", "5.3.3", 400), Observation.BLACK_BOX))
    header = header_from_record(projected[0])
    config, environment = header.config, header.hidden_environment()
    assert config.pool_enabled and (config.transient_store_pool_size, config.mapped_file_size) == (2, 2)
    assert first_impossible(config, environment, projected[1:]) is None
    larger = first_impossible(dataclasses.replace(config, transient_store_pool_size=4), environment, projected[1:])
    assert larger is not None and larger.claim == "reject_request_answers_only_while_busy_or_deficient"


#: The broken examples whose defect the wire alone shows: the event and the claim.
WIRE_SHOWS = {
    "fifo_service_per_queue": (10, "responses_carry_the_profile_code_and_remark"),
    "no_queue_over_capacity": (35, "no_queue_exceeds_its_capacity"),
    "pcbusy_only_while_busy": (84, "reject_request_answers_only_while_busy_or_deficient"),
    "responses_carry_the_profile_codes_and_remarks": (9, "responses_carry_the_profile_code_and_remark"),
    "rejectrequest_only_while_busy_or_deficient": (43, "reject_request_answers_only_while_busy_or_deficient"),
    "timeout_only_after_the_queue_wait": (75, "timeout_answers_only_after_the_queue_wait"),
}


@pytest.mark.parametrize("name", sorted(p.stem.removeprefix("broken-") for p in EXAMPLES.glob("broken-*.jsonl")))
def test_the_broken_examples_the_wire_rules_out_are_black_box_violations_at_that_event(name: str) -> None:
    records = [r for _, r in raw_records(EXAMPLES / f"broken-{name}.jsonl")]
    projected = list(project(records, Observation.BLACK_BOX))
    header = header_from_record(projected[0])
    found = first_impossible(header.config, QUIET, projected[1:])
    assert (None if found is None else (found.seq, found.claim)) == WIRE_SHOWS.get(name)
    if found is not None:
        (full,) = replay_records(records)
        assert full.verdict == "violation"  # the full replay agrees: no run of the spec
        result = replay_partial(header, projected[1:], Budgets(candidates=2_000, steps=200_000, seconds=3))
        assert result.verdict == "violation" and result.witness == ()
        assert f"seq {found.seq} " in result.detail and found.claim in result.detail
