"""BrokerFastFailure: a fixed-rate task that answers requests the broker will not serve in time.

Each run (if ``brokerFastFailureEnable``; 4.0.0–4.1.0 have no switch) first drains the send queue
while the page cache is busy, answering each head [PCBUSY_CLEAN_QUEUE] whatever its age, then scans
each cleaned queue from its head, answering [TIMEOUT_CLEAN_QUEUE] to every head that has waited at
least the queue's wait, and stops at the first head that is young, foreign or already stopped.

Sources: B/latency/BrokerFastFailure.java start (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L82-L91), cleanExpiredRequest, cleanExpiredRequestInQueue;
R/netty/RequestTask.java returnResponse (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L83-L87).
"""

from __future__ import annotations

import enum
from collections import deque
from typing import TYPE_CHECKING

from reference.remoting import Writer
from reference.requests import QueueItem, RequestTask, cast_runnable
from reference.threads import ThreadBody
from spec import state
from spec.codes import ResponseCode, ResponseKind, pcbusy_remark, timeout_remark
from spec.fastfailure import (
    FastFailureCleansExpiredHead,
    FastFailureDrainsBusySendQueue,
    FastFailureDropsForeignElement,
    FastFailureEndsBusyDrain,
    FastFailureSkipsRun,
    FastFailureStartsRun,
    FastFailureStopsAtHead,
)
from spec.profiles import ExecutorName

if TYPE_CHECKING:
    from reference.broker import Broker


class FastFailureStage(enum.Enum):
    """Where BrokerFastFailureScheduledThread is."""

    BETWEEN_RUNS = "between runs"
    PCBUSY_DRAIN = "phase 1: while (isOSPageCacheBusy()) poll the send queue"
    TIMEOUT_CLEAN = "phase 2: cleanExpiredRequestInQueue, queue by queue"


class BrokerFastFailure:
    """``scheduleAtFixedRate(task, initialDelay, period)`` and the run it schedules."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        config = broker.config
        self.next_run = config.start_time_ms + config.fast_failure_initial_delay_ms
        self.stage = FastFailureStage.BETWEEN_RUNS
        self.queue_index = 0  # phase 2: the queue being scanned
        self.scan_wait = 0  # phase 2: the maxWait argument of the current scan
        self.body = self._scheduled_thread()

    def next_fast_failure_run(self, scheduled: int) -> int:
        """scheduleAtFixedRate: the next run is one period after this run's slot (not its end)."""
        return scheduled + self.broker.config.fast_failure_period_ms

    def fast_failure_switch_on(self) -> bool:
        """``if (brokerConfig.isBrokerFastFailureEnable())`` from 4.2.0; 4.0.0–4.1.0 have no switch."""
        return self.broker.fast_failure_enable or not self.broker.profile.fast_failure_switch

    def phase_one_takes(self, head: QueueItem) -> bool:
        """Phase 1 polls whatever is at the head: there is no age threshold (corner 13)."""
        return True

    def fast_failure_now(self, run_started_at: int) -> int:
        """The clock phase 2 compares a head against: Java re-reads currentTimeMillis for every head
        (corner 25), so the run's start time is not used (the rust port uses it)."""
        return self.broker.now

    def is_expired(self, task: RequestTask, now: int, max_wait_ms: int) -> bool:
        """``behind >= maxWait`` with ``behind = now - createTimestamp``: non-strict (corner 20)."""
        return now - task.create_timestamp >= max_wait_ms

    def find_expired(self, queue: deque[QueueItem], max_wait_ms: int, now: int) -> QueueItem | None:
        """cleanExpiredRequestInQueue's ``peek``: the head if it is a live, expired RequestTask.

        An empty queue, a head castRunnable cannot unwrap, a stopRun head, or a young head ends the
        scan of this queue (corners 21, 22).
        """
        if not queue:
            return None
        head = queue[0]
        task = cast_runnable(head)
        if task is None or task.stop_run:
            return None
        return head if self.is_expired(task, now, max_wait_ms) else None

    def remove_expired(self, queue: deque[QueueItem], head: QueueItem) -> None:
        """``blockingQueue.remove(runnable)`` before ``setStopRun(true)``: the task leaves the queue.

        Java answers only if the removal succeeded; here no other thread runs within the step, so it
        always does (corner 23). The rust port instead leaves cancelled entries queued.
        """
        queue.remove(head)

    def fast_failure_scan_limit(self) -> int | None:
        """How many heads one run may clean from one queue: no limit in Java."""
        return None

    def reported_queue_size(self, queue: deque[QueueItem]) -> int:
        """``size of queue`` in the remarks: measured right after the removal (corners 18, 24)."""
        return len(queue)

    def wait_for(self, queue: ExecutorName) -> int:
        """The current ``waitTimeMillsIn<queue>Queue``."""
        for name, wait in self.broker.queue_waits:
            if name is queue:
                return wait
        raise KeyError(f"the {queue.value} queue is not cleaned")

    def _scheduled_thread(self) -> ThreadBody:
        """BrokerFastFailureScheduledThread: runs never overlap; a late run is followed at once by the
        next due one (corner 27)."""
        while True:
            if self.broker.now < self.next_run:
                yield None
                continue
            self.next_run = self.next_fast_failure_run(self.next_run)
            if not self.fast_failure_switch_on():
                yield FastFailureSkipsRun()
                continue
            self.stage = FastFailureStage.PCBUSY_DRAIN
            yield FastFailureStartsRun()
            yield from self._clean_expired_request(run_started_at=self.broker.now)

    def _clean_expired_request(self, run_started_at: int) -> ThreadBody:
        """cleanExpiredRequest: the PCBUSY drain of the send queue, then each queue's timeouts."""
        broker = self.broker
        send_queue = broker.executors[ExecutorName.SEND].queue
        while broker.message_store.is_os_page_cache_busy() and send_queue and self.phase_one_takes(send_queue[0]):
            item = send_queue.popleft()
            task = cast_runnable(item)
            if task is None:  # 4.x: rt.returnResponse throws NPE, swallowed; 5.x skips null (corner 17)
                yield FastFailureDropsForeignElement()
                continue
            remark = pcbusy_remark(broker.now - task.create_timestamp, self.reported_queue_size(send_queue))
            self._return_response(task, remark, ResponseKind.PCBUSY_CLEAN_QUEUE)
            yield FastFailureDrainsBusySendQueue()
        self._start_scan(0)
        yield FastFailureEndsBusyDrain()
        while self.stage is FastFailureStage.TIMEOUT_CLEAN:
            name, _ = broker.queue_waits[self.queue_index]
            yield from self._clean_expired_request_in_queue(name, self.scan_wait, run_started_at)

    def _start_scan(self, index: int) -> None:
        """Call cleanExpiredRequestInQueue on the ``index``-th cleaned queue with its maxWait, read now
        (4.2.0–5.2.0 a getter, 5.3.0+ a Supplier: a change applies from the next scan, corner 27);
        past the last queue the run ends."""
        waits = self.broker.queue_waits
        if index >= len(waits):
            self.stage = FastFailureStage.BETWEEN_RUNS
            self.queue_index = 0
            self.scan_wait = 0
        else:
            self.stage = FastFailureStage.TIMEOUT_CLEAN
            self.queue_index = index
            self.scan_wait = waits[index][1]

    def _clean_expired_request_in_queue(self, name: ExecutorName, max_wait_ms: int, run_started_at: int) -> ThreadBody:
        """cleanExpiredRequestInQueue(queue, maxWait): remove expired heads until one is not."""
        queue = self.broker.executors[name].queue
        limit = self.fast_failure_scan_limit()
        cleaned = 0
        while True:
            now = self.fast_failure_now(run_started_at)
            head = None if limit is not None and cleaned >= limit else self.find_expired(queue, max_wait_ms, now)
            if head is None:
                self._start_scan(self.queue_index + 1)
                yield FastFailureStopsAtHead(name)
                return
            task = cast_runnable(head)
            assert task is not None
            self.remove_expired(queue, head)
            task.stop_run = True
            remark = timeout_remark(now - task.create_timestamp, self.reported_queue_size(queue))
            self._return_response(task, remark, ResponseKind.TIMEOUT_CLEAN_QUEUE)
            cleaned += 1
            yield FastFailureCleansExpiredHead(name)

    def _return_response(self, task: RequestTask, remark: str, kind: ResponseKind) -> None:
        """RequestTask.returnResponse(SYSTEM_BUSY, remark): ``channel.writeAndFlush``, oneway or not."""
        command = task.command
        response = state.Response(command.opaque, ResponseCode.SYSTEM_BUSY, remark, kind)
        self.broker.remoting.write_response(Writer.DIRECT, command, response)
