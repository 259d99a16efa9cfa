"""What the wire alone rules out: necessary conditions of the spec, read off arrivals and answers.

The partial replay decides *violation* only when its search was exhaustive, and at ``black-box``
the search runs out of budget after a few events of a busy trace. Some answers, though, no run of
the spec can write whatever its hidden steps did, and that can be seen from the arrivals and
answers alone, in one pass:

- **A busy store** (``[PCBUSY_CLEAN_QUEUE]``, ``[PC_SYNCHRONIZED]`` and a send-back's busy status,
  and ``[REJECTREQUEST]`` when the TransientStorePool is off) needs ``beginTimeInLock`` set more
  than ``osPageCacheBusyTimeOutMills`` ago (``spec.putlock.is_os_page_cache_busy``). Only a writer
  of the commit log stamps it, when it takes the put lock, which is after it arrived
  (``spec.putlock.acquire_for_put``; the HA service takes the lock without stamping,
  ``acquire_for_ha``). A writer that was answered before the busy answer had released the lock,
  and the release resets the stamp, except an exception inside the lock in the releases that do
  not reset it in ``finally`` (``throw_inside_lock``), whose answer is SYSTEM_ERROR. So some writer
  must have arrived more than the timeout before, and not have been answered before, unless with
  SYSTEM_ERROR in such a release (every other answer a writer gets is written after the reset, or
  on a path that never takes the lock: the dispatch, a cleaner, the put pre-check, the limiter).
- **``[REJECTREQUEST]`` with the TransientStorePool on** needs the store busy (above) or the pool
  deficient, no buffer available (``spec.remoting.reject_request``,
  ``spec.storepool.is_transient_store_pool_deficient``). Only a new commit-log file borrows a
  buffer, created by a writer inside the put lock when the last file is full
  (``spec.workers.worker_creates_mapped_file``), and a file fills with one message for each writer
  that appends (``worker_appends_and_unlocks``). So ``transientStorePoolSize`` buffers out at once
  need as many files created, the first ``size - 1`` of them filled: ``(size - 1) × mappedFileSize``
  writers that appended and one more that created the last, each of which arrived before and was not
  answered with a code only a request that never took the lock gets (neither SUCCESS nor SYSTEM_ERROR).
- **A request with a code no processor serves** (no registered processor, not one the default
  processor's switch knows) is answered, but for flow control, only REQUEST_CODE_NOT_SUPPORTED
  with `` request type <its code> not supported``: by the dispatch when there is no default
  processor (``spec.remoting.dispatch_answers_not_supported``), by the default processor from
  4.9.1, which in 4.0.0–4.9.0 answers nothing (``spec.workers.worker_processes_request``).
- **A flow-control remark** (one that opens with ``[REJECTREQUEST]``, ``[OVERLOAD]``,
  ``[PC_SYNCHRONIZED]``, ``[PCBUSY_CLEAN_QUEUE]``, ``[TIMEOUT_CLEAN_QUEUE]`` or ``[RateLimit]``) is
  written only by that tag's code path, in its exact text and with its code: SYSTEM_BUSY, and for
  ``[PC_SYNCHRONIZED]`` the profile's (``spec.invariants.answer_is_expected``); no processor's
  answer, put's SUCCESS or exception text matches one (``spec.state.recorded_as``).
- **A cleaner's remark** ("period in queue: 54ms, size of queue: 5") reports the task's wait, at
  most the time since its request arrived (the task is created after the arrival), at least its
  queue's wait for ``[TIMEOUT_CLEAN_QUEUE]`` (``spec.fastfailure.is_expired``); and the size left,
  at most the queue's capacity less the task taken (``no_queue_exceeds_its_capacity``). A cleaner
  runs only from the first scheduled run on, and only with fast failure on.
- **``[OVERLOAD]``** is the executor refusing a task because its queue is full
  (``spec.remoting.dispatch_queues_task``): as many requests routed to that executor as its
  capacity must have arrived before and not been answered yet, each being in the queue, plus
  whatever foreign tasks the environment may put there.

Two flow-control claims have no shadow here, because the wire does not fix what they are about.
Fast failure's period: a run starts at its slot or any time later and the clock may move while it
runs (the scheduler is not assumed punctual), so the period only caps how many runs have started
by a time, and one run may answer many requests. A queue's order: a request may wait on its
remoting thread, its task created or not, while another thread dispatches a later one, so with two
or more remoting threads arrival order does not fix the order a queue serves in.

Every condition is a consequence of the spec's guards and effects, weakened wherever the
environment may interfere (an operator changing a queue's wait or the switch, foreign tasks):
so a trace that breaks one has no run of the spec, and the partial replay may call it a
violation without searching. The converse does not hold (these are far from sufficient), which is
why they only ever add violations. ``tests/test_traces_necessary.py`` checks that no recording of
the reference broker breaks them, at every level, and that each broken example they catch is one
the full replay calls a violation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spec.codes import (
    CLEAN_QUEUE_PATTERN,
    FLOW_CONTROL_TAGS,
    OVERLOAD_REMARK,
    REJECT_REQUEST_REMARK,
    ResponseCode,
    ResponseKind,
    is_flow_control_remark,
    not_supported_remark,
)
from spec.config import BrokerConfig
from spec.environment import InternalTaskSubmitted, OperatorSetsFastFailureEnable, OperatorSetsQueueWait
from spec.invariants import answer_is_expected
from spec.machine import Environment
from spec.profiles import ExecutorName
from spec.remoting import RequestArrives, route
from spec.state import Response
from spec.workers import busy_answer
from traces.format.records import RecordedResponse, responses_from_record


@dataclass(frozen=True)
class Impossible:
    """An observed event no run of the spec can write, and why."""

    index: int  # of the event among the trace's events
    seq: int
    claim: str  # the spec's claim whose wire shadow it breaks
    detail: str


@dataclass
class _Request:
    """What the wire showed of one request so far."""

    arrived: int  # ts
    code: int
    executor: ExecutorName | None
    answer: RecordedResponse | None = None


class _Wire:
    """What the trace showed so far: the requests, by the trace's opaque (validation makes each
    opaque one request's; given unvalidated events, a later arrival replaces the earlier), kept
    as counts a condition reads at once (one pass, however long the trace); and what the
    environment may have done: the queue waits an operator may have set, whether fast failure may
    be on, and the foreign tasks that may sit in each queue (the environment's declared steps, and
    those the trace's level shows)."""

    def __init__(self, config: BrokerConfig, environment: Environment) -> None:
        self.config = config
        self.current: dict[int, _Request] = {}
        self.unanswered: dict[ExecutorName | None, int] = {}  # requests routed to each executor, not answered yet
        #: The writers of the commit log in arrival order, from the earliest that may still hold
        #: its beginTimeInLock stamp on (those behind it may already have let theirs go).
        self.writers: deque[_Request] = deque()
        #: The writers of the commit log that arrived and may have taken the put lock: all but those
        #: answered with a code no lock holder gets (neither SUCCESS nor SYSTEM_ERROR).
        self.lockers = 0
        self.waits: dict[ExecutorName, set[int]] = {}
        for queue, wait in config.queue_waits + environment.queue_wait_changes:
            self.waits.setdefault(queue, set()).add(wait)
        self.switch_may_be_on = not config.profile.fast_failure_switch or config.fast_failure_enable or True in environment.fast_failure_toggles
        self.foreign = {e.name: environment.max_foreign_tasks if e.name in environment.foreign_tasks else 0 for e in config.executors}
        self.capacity = {e.name: e.capacity for e in config.executors}

    def environment_step(self, record: Mapping[str, Any]) -> None:
        """An environment step the trace shows."""
        kind = record["kind"]
        if kind == OperatorSetsQueueWait.__name__:
            self.waits.setdefault(ExecutorName(record["queue"]), set()).add(record["wait_ms"])
        elif kind == OperatorSetsFastFailureEnable.__name__:
            self.switch_may_be_on = self.switch_may_be_on or record["enabled"]
        elif kind == InternalTaskSubmitted.__name__:
            executor = ExecutorName(record["executor"])
            if executor in self.foreign:  # a task for an executor the broker lacks is in no queue
                self.foreign[executor] += 1

    def arrive(self, record: Mapping[str, Any]) -> None:
        request = _Request(record["ts"], record["code"], route(self.config, record["code"]))
        self.current[record["request_id"]] = request
        self.unanswered[request.executor] = self.unanswered.get(request.executor, 0) + 1
        if self.config.profile.writes_commit_log(request.code):
            self.writers.append(request)
            self.lockers += 1

    def answer(self, request: _Request, response: RecordedResponse) -> None:
        request.answer = response
        self.unanswered[request.executor] -= 1
        if self.config.profile.writes_commit_log(request.code) and response.code not in (ResponseCode.SUCCESS, ResponseCode.SYSTEM_ERROR):
            self.lockers -= 1

    def earliest_stamp(self) -> int | None:
        """The earliest arrival of a writer that may still hold the stamp it put on beginTimeInLock,
        or None: one not answered yet, or, where ``finally`` does not reset the stamp, one answered
        SYSTEM_ERROR (an exception inside the lock). A writer once past that never holds it again."""
        reset_in_finally = self.config.profile.begin_time_reset_in_finally
        while self.writers and (answer := self.writers[0].answer) is not None and (reset_in_finally or answer.code != ResponseCode.SYSTEM_ERROR):
            self.writers.popleft()
        return self.writers[0].arrived if self.writers else None


def first_impossible(config: BrokerConfig, environment: Environment, events: Sequence[Mapping[str, Any]]) -> Impossible | None:
    """The first event that no run of the spec under ``environment`` can write (see the module docstring), or None."""
    wire = _Wire(config, environment)
    for index, record in enumerate(events):
        if record["kind"] == RequestArrives.__name__:
            wire.arrive(record)
        wire.environment_step(record)
        for response in responses_from_record(record):
            request = wire.current.get(response.request_id)
            if request is not None and request.answer is None:
                why = _why_impossible(config, wire, request, response, record["ts"])
                if why is not None:
                    claim, detail = why
                    return Impossible(index, record["seq"], claim, f"opaque {response.request_id}: {detail}")
                wire.answer(request, response)
    return None


def _why_impossible(config: BrokerConfig, wire: _Wire, request: _Request, response: RecordedResponse, ts: int) -> tuple[str, str] | None:
    remark = response.remark
    if not is_flow_control_remark(remark):
        why = _unknown_code(config, wire, request, response)
        if why is not None:
            return why
    if remark is None:
        return None  # the other conditions judge answers that carry a remark
    why = _flow_control_answer(config, response, remark)
    if why is not None:
        return why
    cleaned = CLEAN_QUEUE_PATTERN.fullmatch(remark)
    if cleaned is not None:
        why = _cleaner(config, wire, request, cleaned.group(1), int(cleaned.group(2)), int(cleaned.group(3)), ts)
        if why is not None:
            return why
    claim = _needs_busy(config, request, response, remark)
    if claim is not None:
        why = _busy(config, wire, claim, ts)
        if why is None or remark != REJECT_REQUEST_REMARK or not config.pool_enabled:
            return why
        return _deficient(config, wire, why)
    if remark == OVERLOAD_REMARK:
        return _overload(wire, request)
    return None


def _flow_control_answer(config: BrokerConfig, response: RecordedResponse, remark: str) -> tuple[str, str] | None:
    """Why an answer whose remark opens with a flow-control tag is not the one that tag's code path
    writes (its code, and its text as the spec's claim reads it), or None: no other path writes such a remark."""
    tag = next((t for t in FLOW_CONTROL_TAGS if remark.startswith(t)), None)
    if tag is None:
        return None
    kind = ResponseKind(tag[1:-1])  # each kind is named by its tag
    code = config.profile.pc_synchronized_code if kind is ResponseKind.PC_SYNCHRONIZED else ResponseCode.SYSTEM_BUSY
    written = answer_is_expected(config, Response(0, code, remark, kind))
    if written and response.code == code:
        return None
    return (
        "responses_carry_the_profile_code_and_remark",
        f"{remark!r} is written only by its flow-control code path, with code {int(code)} ({code.name}) in"
        f" {config.profile.version}, not {response.code}" + ("" if written else ", and not with this text"),
    )


def _needs_busy(config: BrokerConfig, request: _Request, response: RecordedResponse, remark: str) -> str | None:
    """The claim of an answer only a busy store writes (see the module docstring), or None."""
    if remark.startswith("[PCBUSY_CLEAN_QUEUE]"):
        return "pcbusy_answers_only_while_busy"
    if not config.profile.writes_commit_log(request.code):
        return None
    if (response.code, remark) == busy_answer(config.profile, request.code):
        return "responses_carry_the_profile_code_and_remark"  # [PC_SYNCHRONIZED] is written by the put pre-check, only while busy
    if remark == REJECT_REQUEST_REMARK:
        return "reject_request_answers_only_while_busy_or_deficient"
    return None


def _busy(config: BrokerConfig, wire: _Wire, claim: str, ts: int) -> tuple[str, str] | None:
    timeout = config.os_page_cache_busy_timeout_ms
    latest = ts - timeout - 1  # a stamp at or before it is more than the timeout in the past
    earliest = wire.earliest_stamp()
    if earliest is not None and earliest <= latest:
        return None
    if latest < config.start_time_ms:
        return claim, f"the store must be busy at ts {ts} (beginTimeInLock more than {timeout} ms before), but the broker started at ts {config.start_time_ms}"
    return (
        claim,
        f"the store must be busy at ts {ts} (beginTimeInLock more than {timeout} ms before), but no writer of the"
        f" commit log that arrived by ts {latest} was still unanswered",
    )


def _deficient(config: BrokerConfig, wire: _Wire, not_busy: tuple[str, str]) -> tuple[str, str] | None:
    """Why the pool cannot be deficient either, after ``not_busy`` said why the store is not busy; None if it may be."""
    size, file_size = config.transient_store_pool_size, config.mapped_file_size
    needed = max(0, (size - 1) * file_size + 1)  # writers inside the lock to lend every buffer at once (none for a pool of none)
    lockers = wire.lockers - 1  # but the request refused, which never reached the lock
    if lockers >= needed:
        return None
    claim, busy = not_busy
    return (
        claim,
        f"{busy}; nor can the pool be deficient: lending its {size} buffers at once takes {needed} writers inside the put lock"
        f" ({size - 1} files of {file_size} messages filled, one more created), but only {lockers} other writer(s) had arrived"
        " that were not answered with a code no lock holder gets",
    )


def _unknown_code(config: BrokerConfig, wire: _Wire, request: _Request, response: RecordedResponse) -> tuple[str, str] | None:
    """Why an answer other than flow control's cannot be the one to a request no processor serves, or None."""
    profile = config.profile
    if profile.has_processor_for(request.code) or request.code in profile.admin_codes:
        return None  # a processor's own answer: the spec leaves its code and remark to the processor
    if request.executor is not None and request.executor not in wire.capacity:
        return None  # no run has this arrival: the spec's guards say nothing of its answer
    expected = (int(ResponseCode.REQUEST_CODE_NOT_SUPPORTED), not_supported_remark(request.code))
    if request.executor is None or profile.admin_answers_unknown_code:
        if (response.code, response.remark) == expected:
            return None
        return (
            "responses_carry_the_profile_code_and_remark",
            f"code {request.code} has no processor, so it is answered {expected[0]} {expected[1]!r} or by flow control,"
            f" not {response.code} {response.remark!r}",
        )
    return (
        "responses_carry_the_profile_code_and_remark",
        f"code {request.code} has no processor and {profile.version}'s default processor answers it nothing, so only flow control"
        f" answers it, not {response.code} {response.remark!r}",
    )


def _cleaner(config: BrokerConfig, wire: _Wire, request: _Request, tag: str, period: int, size: int, ts: int) -> tuple[str, str] | None:
    if request.executor is None:
        return "timeout_answers_only_after_the_queue_wait", f"{tag} cleaned a request that goes to no executor"
    if tag == "PCBUSY_CLEAN_QUEUE" and request.executor is not ExecutorName.SEND:
        return "pcbusy_answers_only_while_busy", f"[PCBUSY_CLEAN_QUEUE] drains only the send queue, not {request.executor.value}'s"
    if period > ts - request.arrived:
        return (
            "timeout_answers_only_after_the_queue_wait",
            f"the remark's period in queue ({period} ms) is longer than the request has been there (arrived at ts {request.arrived}, answered at {ts})",
        )
    capacity = wire.capacity.get(request.executor)
    if capacity is not None and size > capacity - 1:
        return (
            "no_queue_exceeds_its_capacity",
            f"the remark's size of queue ({size}) after taking one task is more than the {request.executor.value} queue's capacity ({capacity}) allows",
        )
    first_run = config.start_time_ms + config.fast_failure_initial_delay_ms
    if ts < first_run:
        return "fast_failure_runs_10ms_apart_while_enabled", f"{tag} at ts {ts}, before fast failure's first run (ts {first_run})"
    if not wire.switch_may_be_on:
        return "fast_failure_runs_10ms_apart_while_enabled", f"{tag} while brokerFastFailureEnable is off and no operator may turn it on"
    if tag == "TIMEOUT_CLEAN_QUEUE":
        waits = wire.waits.get(request.executor)
        if not waits:
            return "timeout_answers_only_after_the_queue_wait", f"the {request.executor.value} queue has no wait, so no cleaner takes from it"
        if period < min(waits):
            return (
                "timeout_answers_only_after_the_queue_wait",
                f"the remark's period in queue ({period} ms) is shorter than the {request.executor.value} queue's wait ({min(waits)} ms)",
            )
    return None


def _overload(wire: _Wire, request: _Request) -> tuple[str, str] | None:
    if request.executor is None or request.executor not in wire.capacity:
        return None  # an executor the broker lacks: whatever answers for it, the spec's guards say nothing here
    capacity = wire.capacity[request.executor]
    if capacity is None:
        return "overload_answers_only_when_the_queue_is_full", f"[OVERLOAD] from the {request.executor.value} executor, whose queue is unbounded"
    waiting = wire.unanswered[request.executor] - 1  # but the request refused
    foreign = wire.foreign[request.executor]
    if waiting + foreign >= capacity:
        return None
    return (
        "overload_answers_only_when_the_queue_is_full",
        f"[OVERLOAD] needs the {request.executor.value} queue full ({capacity} tasks), but only {waiting} request(s)"
        f" routed there were unanswered" + (f" (and at most {foreign} foreign task(s))" if foreign else ""),
    )
