"""BrokerFastFailure: the scheduler thread that empties queues every 10 ms.

One run (``cleanExpiredRequest``) has two phases:

1. While ``isOSPageCacheBusy()`` (re-read before every poll, corner 12), poll the **send** queue
   (only it, corner 14) and answer every RequestTask ``[PCBUSY_CLEAN_QUEUE]``, whatever its age
   (corner 13). A polled element that is not a RequestTask is lost silently (corner 17).
2. For each cleaned queue in the profile's order, look at the head only (corner 21): a head that
   is absent, not a RequestTask, or already stopRun ends that queue's scan (corner 22); a head
   with ``now - createTimestamp >= maxWait`` (non-strict, corner 20) is removed, marked stopRun,
   and answered ``[TIMEOUT_CLEAN_QUEUE]``; the first young head ends the scan.

Both answers are SYSTEM_BUSY, written with ``channel.writeAndFlush`` even for oneway requests
(``RequestTask.returnResponse`` has no oneway check, corner 8), with the queue size measured
after the removal (corners 18, 25) and, for phase 2, a clock read per iteration (corner 25).

The schedule is fixed-rate: first run 1000 ms after start, then every 10 ms; runs never overlap
and a late run is followed at once by the next due one (corner 27). The switch
brokerFastFailureEnable and the waits are read each run.

Source: B/latency/BrokerFastFailure.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L42-L165), 4.2.0–HEAD.
Simplifications:
- ``queue.remove(r)`` failing because a worker took the element (corner 23) is the same as the
  worker having taken it one step earlier: the spec's steps are atomic, so the head is re-read.
- Exceptions escaping a run (which cancel the schedule for good, corner 28) are not modelled:
  nothing in the spec's runs can throw.
- 5.0.0+'s jstack logging every 15 s is a log line, not an output.
"""

from __future__ import annotations


from spec.codes import ResponseCode, ResponseKind, pcbusy_remark, timeout_remark
from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.profiles import ExecutorName
from spec.putlock import is_os_page_cache_busy
from spec.state import (
    NO_OUTPUTS,
    BrokerState,
    FastFailurePhase,
    ForeignTask,
    Next,
    Outputs,
    QueueElement,
    RequestTask,
    Response,
    with_executor,
)
from spec.actors import FastFailureStep


def is_expired(task: RequestTask, now: int, max_wait_ms: int) -> bool:
    """``behind >= maxWait`` with ``behind = now - createTimestamp``: non-strict (corner 20).

    post: __return__ == (now - task.create_timestamp >= max_wait_ms)
    """
    return now - task.create_timestamp >= max_wait_ms


def _run_due(config: BrokerConfig, s: BrokerState) -> bool:
    return s.fast_failure_phase is FastFailurePhase.IDLE and s.now >= s.fast_failure_next_run


def _switch_on(config: BrokerConfig, s: BrokerState) -> bool:
    return s.fast_failure_enable or not config.profile.fast_failure_switch


@record
class FastFailureStartsRun(FastFailureStep):
    """A scheduled run of BrokerFastFailure begins with the switch on: phase 1 starts.

    Changes: fast_failure_phase, fast_failure_next_run
    """


def fast_failure_starts_run_enabled(config: BrokerConfig, s: BrokerState, a: FastFailureStartsRun) -> bool:
    """Guard: a run is due, none is in progress, and the switch is on (or the version has none).

    Source: BrokerFastFailure.start (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L54-L63): the fixed-rate task, gated by ``isBrokerFastFailureEnable()``
    from 4.2.0.
    """
    return _run_due(config, s) and _switch_on(config, s)


def fast_failure_starts_run(config: BrokerConfig, s: BrokerState, a: FastFailureStartsRun) -> Next:
    """Effect: phase 1 begins; the next run is scheduled one period after this one's slot.

    Source: BrokerFastFailure.start (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L54-L63): ``scheduleAtFixedRate(..., 1000, 10, MILLISECONDS)``; the
    task calls cleanExpiredRequest if ``isBrokerFastFailureEnable()`` (4.2.0+).
    """
    s = replace(
        s,
        fast_failure_phase=FastFailurePhase.DRAINING_BUSY,
        fast_failure_next_run=s.fast_failure_next_run + config.fast_failure_period_ms,
    )
    return s, NO_OUTPUTS


@record
class FastFailureSkipsRun(FastFailureStep):
    """A scheduled run begins with brokerFastFailureEnable off: it does nothing.

    Changes: fast_failure_next_run
    """


def fast_failure_skips_run_enabled(config: BrokerConfig, s: BrokerState, a: FastFailureSkipsRun) -> bool:
    """Guard: a run is due and brokerFastFailureEnable is false.

    Source: BrokerFastFailure.start (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L82-L91): ``if
    (brokerController.getBrokerConfig().isBrokerFastFailureEnable())`` false.
    """
    return _run_due(config, s) and not _switch_on(config, s)


def fast_failure_skips_run(config: BrokerConfig, s: BrokerState, a: FastFailureSkipsRun) -> Next:
    """Effect: the scheduler still ticks but does nothing (4.2.0+)."""
    return replace(s, fast_failure_next_run=s.fast_failure_next_run + config.fast_failure_period_ms), NO_OUTPUTS


def _draining_head(config: BrokerConfig, s: BrokerState) -> QueueElement | None:
    if s.fast_failure_phase is not FastFailurePhase.DRAINING_BUSY:
        return None
    if not is_os_page_cache_busy(s.lock, s.now, config.os_page_cache_busy_timeout_ms):
        return None
    queue = s.executor(ExecutorName.SEND).queue
    return queue[0] if queue else None


@record
class FastFailureDrainsBusySendQueue(FastFailureStep):
    """Phase 1, store busy: poll the send queue's head and answer ``[PCBUSY_CLEAN_QUEUE]``.

    Changes: executors
    """


def fast_failure_drains_busy_send_queue_enabled(
    config: BrokerConfig, s: BrokerState, a: FastFailureDrainsBusySendQueue
) -> bool:
    """Guard: phase 1, the store is busy now, and the send queue's head is a RequestTask.

    Source: BrokerFastFailure.cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121): ``while (isOSPageCacheBusy())`` and a RequestTask
    polled from the send queue.
    """
    return isinstance(_draining_head(config, s), RequestTask)


def fast_failure_drains_busy_send_queue(
    config: BrokerConfig, s: BrokerState, a: FastFailureDrainsBusySendQueue
) -> Next:
    """Effect: ``sendQueue.poll(0, SECONDS)``; ``returnResponse(SYSTEM_BUSY, "[PCBUSY_CLEAN_QUEUE]...")``
    with the period computed now and the queue size after the poll. stopRun is not set: the task
    left the queue and can never run (corner 15).

    Source: BrokerFastFailure.cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121), the while(isOSPageCacheBusy()) loop.
    """
    task = _draining_head(config, s)
    assert isinstance(task, RequestTask)
    send = s.executor(ExecutorName.SEND)
    send = replace(send, queue=send.queue[1:])
    remark = pcbusy_remark(s.now - task.create_timestamp, len(send.queue))
    response = Response(task.request.id, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.PCBUSY_CLEAN_QUEUE)
    return with_executor(s, send), Outputs(responses=(response,))


@record
class FastFailureDropsForeignElement(FastFailureStep):
    """Phase 1, store busy, the polled element is not a RequestTask: it is dropped silently.

    Changes: executors
    """


def fast_failure_drops_foreign_element_enabled(
    config: BrokerConfig, s: BrokerState, a: FastFailureDropsForeignElement
) -> bool:
    """Guard: phase 1, the store is busy, and the send queue's head is not a RequestTask.

    Source: BrokerFastFailure.cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121): the polled element is not a RequestTask
    (castRunnable null; corner 17).
    """
    return isinstance(_draining_head(config, s), ForeignTask)


def fast_failure_drops_foreign_element(
    config: BrokerConfig, s: BrokerState, a: FastFailureDropsForeignElement
) -> Next:
    """Effect: the element is polled and lost: 4.x's ``rt.returnResponse`` NPE is swallowed, 5.x
    skips it on ``rt == null``; either way no response and the Future never completes (corner 17).
    """
    send = s.executor(ExecutorName.SEND)
    return with_executor(s, replace(send, queue=send.queue[1:])), NO_OUTPUTS


@record
class FastFailureEndsBusyDrain(FastFailureStep):
    """Phase 1 ends: the store is not busy, or the send queue is empty. Phase 2 starts.

    Changes: fast_failure_phase, fast_failure_queue, fast_failure_scan_wait
    """


def fast_failure_ends_busy_drain_enabled(config: BrokerConfig, s: BrokerState, a: FastFailureEndsBusyDrain) -> bool:
    """Guard: phase 1 and (the store is not busy, or the send queue is empty).

    Source: BrokerFastFailure.cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121): the while loop's exit, busy false or the queue
    empty (corner 16).
    """
    return s.fast_failure_phase is FastFailurePhase.DRAINING_BUSY and _draining_head(config, s) is None


def fast_failure_ends_busy_drain(config: BrokerConfig, s: BrokerState, a: FastFailureEndsBusyDrain) -> Next:
    """Effect: phase 2 starts at the first cleaned queue (phase 1 always runs first, corner 19).

    Source: BrokerFastFailure.cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121): the while loop's exit (busy false, isEmpty,
    or a null poll: corner 16) then the cleanExpiredRequestInQueue calls, each of which gets its
    queue's maxWait as an argument, read once when the call starts (4.2.0–5.2.0 a getter,
    5.3.0+ a Supplier): a wait changed during a queue's scan applies from the next scan (corner 27).
    """
    return _scan_queue(s, 0), NO_OUTPUTS


def _scan_queue(s: BrokerState, index: int) -> BrokerState:
    """Phase 2 moves to cleaned queue ``index``, reading its max wait now; past the last, the run ends."""
    if index >= len(s.queue_waits):
        return replace(s, fast_failure_phase=FastFailurePhase.IDLE, fast_failure_queue=0, fast_failure_scan_wait=0)
    return replace(
        s,
        fast_failure_phase=FastFailurePhase.CLEANING,
        fast_failure_queue=index,
        fast_failure_scan_wait=s.queue_waits[index][1],
    )


def _cleaning(config: BrokerConfig, s: BrokerState, queue: ExecutorName) -> tuple[QueueElement | None, int] | None:
    """The head of ``queue`` and its max wait, if phase 2 is scanning ``queue`` now."""
    if s.fast_failure_phase is not FastFailurePhase.CLEANING:
        return None
    if not 0 <= s.fast_failure_queue < len(s.queue_waits):
        return None
    name, _ = s.queue_waits[s.fast_failure_queue]
    if name is not queue:
        return None
    elements = s.executor(name).queue
    return (elements[0] if elements else None), s.fast_failure_scan_wait


def _head_is_cleanable(head: QueueElement | None, now: int, wait: int) -> bool:
    return isinstance(head, RequestTask) and not head.stop_run and is_expired(head, now, wait)


@record
class FastFailureCleansExpiredHead(FastFailureStep):
    """Phase 2: the queue's head waited at least the queue's max wait: remove, stopRun, ``[TIMEOUT_CLEAN_QUEUE]``.

    Changes: executors
    """

    queue: ExecutorName


def fast_failure_cleans_expired_head_enabled(
    config: BrokerConfig, s: BrokerState, a: FastFailureCleansExpiredHead
) -> bool:
    """Guard: phase 2 is on this queue and its head is a live RequestTask with ``behind >= maxWait``.

    Source: BrokerFastFailure.cleanExpiredRequestInQueue (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L123-L155): ``behind >= maxWaitTimeMillsInQueue`` on a
    live RequestTask head (corner 20).
    """
    found = _cleaning(config, s, a.queue)
    return found is not None and _head_is_cleanable(found[0], s.now, found[1])


def fast_failure_cleans_expired_head(
    config: BrokerConfig, s: BrokerState, a: FastFailureCleansExpiredHead
) -> Next:
    """Effect: ``queue.remove(r)``, then ``setStopRun(true)``, then ``returnResponse(SYSTEM_BUSY,
    "[TIMEOUT_CLEAN_QUEUE]...")`` with ``behind`` and the size after removal (corner 24).

    Source: BrokerFastFailure.cleanExpiredRequestInQueue (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L123-L155), 4.2.0–HEAD.
    Simplification: remove, stopRun and respond are one step; the size an IO thread could add
    between remove and respond is not modelled (the size is exactly the one after removal).
    """
    found = _cleaning(config, s, a.queue)
    assert found is not None
    head, _ = found
    assert isinstance(head, RequestTask)
    executor = s.executor(a.queue)
    executor = replace(executor, queue=executor.queue[1:])
    behind = s.now - head.create_timestamp
    remark = timeout_remark(behind, len(executor.queue))
    response = Response(head.request.id, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.TIMEOUT_CLEAN_QUEUE)
    return with_executor(s, executor), Outputs(responses=(response,))


@record
class FastFailureStopsAtHead(FastFailureStep):
    """Phase 2: the head is young, cancelled, foreign or absent: stop scanning this queue.

    Changes: fast_failure_phase, fast_failure_queue, fast_failure_scan_wait
    """

    queue: ExecutorName


def fast_failure_stops_at_head_enabled(config: BrokerConfig, s: BrokerState, a: FastFailureStopsAtHead) -> bool:
    """Guard: phase 2 is on this queue and its head is absent, foreign, stopRun, or young.

    Source: BrokerFastFailure.cleanExpiredRequestInQueue (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L123-L155): the loop's ``break``s (corners 21, 22).
    """
    found = _cleaning(config, s, a.queue)
    return found is not None and not _head_is_cleanable(found[0], s.now, found[1])


def fast_failure_stops_at_head(config: BrokerConfig, s: BrokerState, a: FastFailureStopsAtHead) -> Next:
    """Effect: the scan moves to the next queue; after the last queue the run ends.

    Source: BrokerFastFailure.cleanExpiredRequestInQueue (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L123-L155), its ``break``s: isEmpty / null peek / castRunnable null /
    isStopRun / ``behind < maxWait`` (corners 21, 22).
    """
    return _scan_queue(s, s.fast_failure_queue + 1), NO_OUTPUTS
