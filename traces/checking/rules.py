"""Named declarative checks over traces: each rule is a claim, checked on Spark.

A rule has a name that reads as a claim, a one-sentence description, its source, the
observation level it needs, the event kinds it reads, and a passing and a failing example
(``traces/examples/``) that its test runs. A trace observed below a rule's level makes that
rule "inconclusive", never "pass"; so does a trace with nothing for the rule to check.

Two kinds of rule bodies:
- *frame* rules match arrivals with responses across a whole trace: the black-box rules.
- *scan* rules follow one trace's state in ``seq`` order (a queue's requests, the put lock, the
  pool's buffers, the fast-failure schedule, the limiter's buckets), judged with array operations
  over the trace's columns (:mod:`traces.checking.scan`) and the spec's own pure helpers, never the spec's
  ``step``. Spark tasks run them per trace, each task reading whole traces' rows itself
  (:mod:`traces.checking.layout`, :func:`traces.checking.check.per_task`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spec.codes import (
    OVERLOAD_REMARK,
    PC_SYNCHRONIZED_REMARK,
    PUT_CODES,
    REJECT_REQUEST_REMARK,
    is_flow_control_remark,
    parse_clean_queue_remark,
    parse_rate_limit_remark,
    RequestCode,
    ResponseCode,
)
from spec.config import BrokerConfig
from spec.remoting import route
from spec.workers import busy_answer
from traces.format.records import Observation, TraceHeader

LEVEL_ORDER = {Observation.BLACK_BOX: 0, Observation.QUEUES: 1, Observation.FULL: 2}
SAMPLE = 5  # violating events kept per rule and trace


@dataclass(frozen=True)
class Rule:
    """One named check."""

    name: str  # a claim that reads true
    description: str  # one sentence
    source: str  # where the claim comes from (the spec's claim first, where there is one)
    level: Observation  # the observation level the rule needs
    body: str  # "frame" (arrivals matched with responses) or "scan" (the trace's state in seq order)
    passing: str  # example trace (under traces/examples/) the rule passes
    failing: str  # example trace the rule must flag

    @property
    def claim(self) -> str | None:
        """The spec claim (:mod:`spec.invariants`) this rule checks over traces, named first in ``source``."""
        first = self.source.split(";")[0].strip()
        return first.removeprefix("spec.invariants.") if first.startswith("spec.invariants.") else None


RULES: tuple[Rule, ...] = (
    Rule(
        "each_request_is_answered_exactly_once",
        "At trace end every request has one response, except oneway requests and codes the profile answers with silence, which have at most one.",
        "spec.invariants.settles_once_arrivals_stop",
        Observation.BLACK_BOX,
        "frame",
        "conformant-5.3.3.jsonl",
        "broken-each_request_is_answered_exactly_once.jsonl",
    ),
    Rule(
        "no_response_before_its_request",
        "Every response answers a request that arrived earlier in the same trace.",
        "RemotingCommand.opaque echoes the request (NettyRemotingAbstract.processRequestCommand)",
        Observation.BLACK_BOX,
        "frame",
        "conformant-5.3.3.jsonl",
        "broken-no_response_before_its_request.jsonl",
    ),
    Rule(
        "responses_carry_the_profile_codes_and_remarks",
        "Every answer has the code and the verbatim remark its code path writes in the trace's profile, and goes only to a request that path answers (none but the fast-failure and limiter answers, and in 4.x-5.0.0 the dispatcher's refusals, to a oneway request; [REJECTREQUEST] and [PC_SYNCHRONIZED] only to sends, and [PC_SYNCHRONIZED] never to a consumer send-back).",
        "spec.invariants.responses_carry_the_profile_code_and_remark",
        Observation.BLACK_BOX,
        "frame",
        "conformant-5.3.3.jsonl",
        "broken-responses_carry_the_profile_codes_and_remarks.jsonl",
    ),
    Rule(
        "timeout_only_after_the_queue_wait",
        "A [TIMEOUT_CLEAN_QUEUE] answer goes to a task that waited at least its queue's wait, and its remark reports that wait and the queue size after removal.",
        "spec.invariants.timeout_answers_only_after_the_queue_wait; BrokerFastFailure.cleanExpiredRequestInQueue",
        Observation.QUEUES,
        "scan",
        "conformant-full-send-queue.jsonl",
        "broken-timeout_only_after_the_queue_wait.jsonl",
    ),
    Rule(
        "pcbusy_only_while_busy",
        "A [PCBUSY_CLEAN_QUEUE] answer is written only while isOSPageCacheBusy() holds.",
        "spec.invariants.pcbusy_answers_only_while_busy; BrokerFastFailure.cleanExpiredRequest phase 1",
        Observation.FULL,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-pcbusy_only_while_busy.jsonl",
    ),
    Rule(
        "rejectrequest_only_while_busy_or_deficient",
        "A [REJECTREQUEST] answer is written only while the store is busy or the TransientStorePool has no buffer.",
        "spec.invariants.reject_request_answers_only_while_busy_or_deficient; SendMessageProcessor.rejectRequest",
        Observation.FULL,
        "scan",
        "conformant-pool-exhaustion.jsonl",
        "broken-rejectrequest_only_while_busy_or_deficient.jsonl",
    ),
    Rule(
        "no_queue_over_capacity",
        "No executor queue ever holds more tasks than its configured capacity.",
        "spec.invariants.no_queue_exceeds_its_capacity; LinkedBlockingQueue(capacity)",
        Observation.QUEUES,
        "scan",
        "conformant-full-send-queue.jsonl",
        "broken-no_queue_over_capacity.jsonl",
    ),
    Rule(
        "fifo_service_per_queue",
        "Each executor queue hands out (to workers and to fast failure) its tasks in the order they were queued.",
        "LinkedBlockingQueue FIFO; BrokerFastFailure polls the head",
        Observation.QUEUES,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-fifo_service_per_queue.jsonl",
    ),
    Rule(
        "lock_held_by_one_writer_at_a_time",
        "The commit-log put lock is taken only when free and released only by its holder.",
        "spec.invariants.at_most_one_writer_holds_the_put_lock; PutMessageSpinLock / PutMessageReentrantLock",
        Observation.FULL,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-lock_held_by_one_writer_at_a_time.jsonl",
    ),
    Rule(
        "begin_time_zero_when_lock_free",
        "When the put lock is released, beginTimeInLock is back to 0 (broken by an exception inside the lock in 4.0.0–4.9.2 and 5.x).",
        "spec.invariants.begin_time_is_zero_when_lock_is_free; CommitLog, ISSUE #3459",
        Observation.FULL,
        "scan",
        "conformant-4.9.8.jsonl",
        "broken-begin_time_zero_when_lock_free.jsonl",
    ),
    Rule(
        "buffers_conserved_and_returned_only_at_full_commit",
        "Pool buffers are each either available or lent to one file, and a buffer comes back only when its file is committed to the full file size.",
        "spec.invariants.lent_and_available_buffers_partition_the_pool; MappedFile.commit",
        Observation.FULL,
        "scan",
        "conformant-pool-exhaustion.jsonl",
        "broken-buffers_conserved_and_returned_only_at_full_commit.jsonl",
    ),
    Rule(
        "fast_failure_runs_10ms_apart_while_enabled",
        "The k-th fast-failure run starts no earlier than start + initial delay + k × period (header values), and does work only while brokerFastFailureEnable is on.",
        "BrokerFastFailure.start scheduleAtFixedRate(1000, 10 ms)",
        Observation.QUEUES,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-fast_failure_runs_10ms_apart_while_enabled.jsonl",
    ),
    Rule(
        "limiter_decisions_as_the_bucket_says",
        "Each rate-limit decision (admit or throttle) is what the topic's token bucket with its circuit breaker decides at that time.",
        "source 004 RateLimitHandler / TokenBucketRateLimiter; spec.limiter",
        Observation.QUEUES,
        "scan",
        "conformant-retry-storm-limited.jsonl",
        "broken-limiter_decisions_as_the_bucket_says.jsonl",
    ),
)
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
SCAN_RULES = tuple(r.name for r in RULES if r.body == "scan")


# -- Frame rules ------------------------------------------------------------------------------------


def unknown_codes_silent(config: BrokerConfig) -> bool:
    """Whether a non-oneway request may get no answer at all: a code the admin processor does not
    know, on 4.0.0–4.9.0 (its ``default:`` branch returns null)."""
    return not config.profile.admin_answers_unknown_code and config.default_processor_registered


def answering_codes(config: BrokerConfig) -> list[int]:
    """The codes a processor answers whatever the release: the registered ones and the admin switch's."""
    profile = config.profile
    return sorted({code for code, _ in profile.executor_of_code} | profile.admin_codes)


def header_facts(header: TraceHeader) -> dict[str, Any]:
    """The per-trace values the frame rules read."""
    config = header.config
    pc_code, _ = busy_answer(config.profile, RequestCode.SEND_MESSAGE)
    sendback_code, sendback_remark = busy_answer(config.profile, RequestCode.CONSUMER_SEND_MSG_BACK)
    return {
        "unknown_codes_silent": unknown_codes_silent(config),
        "answering_codes": answering_codes(config),
        "commit_log_codes": frozenset(c for c in PUT_CODES if config.profile.writes_commit_log(c)),
        "pc_code": int(pc_code),
        "dispatch_answers_oneway": config.profile.dispatch_answers_oneway,
        "sendback_code": int(sendback_code),
        "sendback_remark": sendback_remark,
    }


def expected_answer_ok(code: int, remark: str | None, facts: Mapping[str, Any]) -> bool:
    """Whether a response's code fits its remark in the trace's profile (``facts`` from :func:`header_facts`)."""
    busy = int(ResponseCode.SYSTEM_BUSY)
    if remark in (REJECT_REQUEST_REMARK, OVERLOAD_REMARK):
        return code == busy
    if remark == PC_SYNCHRONIZED_REMARK:
        return bool(code == facts["pc_code"])
    if remark is not None and (parse_clean_queue_remark(remark) or parse_rate_limit_remark(remark)):
        return code == busy
    if remark is not None and remark.startswith(" request type "):
        return code == int(ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
    if remark is not None and remark == facts["sendback_remark"]:
        return bool(code == facts["sendback_code"])
    # A flow-control tag on any other text is no answer of the profile; any untagged answer may be a
    # processor's own result, whose code is its business (spec.state.recorded_as).
    return not is_flow_control_remark(remark)



def answer_goes_to(remark: str | None, request_code: int, oneway: bool, facts: Mapping[str, Any]) -> bool:
    """Whether a code path of the profile writes an answer with ``remark`` to a request of ``request_code``
    (the remark names the path; whether the code fits the remark is expected_answer_ok's to judge).

    Source: the handler writes a processor's answer only to a two-way request (4.x-5.0.0
    ``!cmd.isOnewayRPC()``, 5.1.0+ writeResponse), as it does [OVERLOAD] in every version; the
    dispatcher's NOT_SUPPORTED and [REJECTREQUEST] reach a oneway client in 4.0.0-5.0.0 only;
    fast failure's and the limiter's answers are written whatever the request (spec.remoting,
    spec.workers, spec.fastfailure). Only SendMessageProcessor (the send-type codes the release
    registers) refuses at dispatch or finds the page cache busy; a consumer send-back's busy answer is SYSTEM_ERROR with the status name.
    """
    if remark is not None and (parse_clean_queue_remark(remark) or parse_rate_limit_remark(remark)):
        return True
    refusal = remark == REJECT_REQUEST_REMARK or (remark is not None and remark.startswith(" request type "))
    if oneway and not (refusal and facts["dispatch_answers_oneway"]):
        return False
    sends = facts["commit_log_codes"]
    if remark == REJECT_REQUEST_REMARK:
        return request_code in sends
    if remark == PC_SYNCHRONIZED_REMARK:
        return request_code in sends and request_code != int(RequestCode.CONSUMER_SEND_MSG_BACK)
    return True
