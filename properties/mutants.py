"""Mutants: deliberately wrong reference brokers, each a real bug class, each of which must be caught.

Every mutant subclasses one part of the reference broker (the remoting server, an executor, the
commit log, fast failure, ...) and overrides one method; :meth:`reference.broker.Broker.with_part`
builds the broker that uses it. Its docstring
names the bug and ``expected`` names the claim or check that should catch it; ``benches`` (and
``versions``) say which lockstep machines to run, and ``scenarios`` which named scenarios may
catch it when the machines cannot reach the difference.

``python -m properties.mutants`` (``make mutants``) runs each mutant's machines with a fixed
budget (derandomized, no database, no shrinking: the first failure is the catch), then its
scenarios, prints per mutant the check that caught it and the time to the first failure, and
ends with ``caught K of N mutants``; it exits non-zero if any mutant survives. It judges two
mutants at a time, each in its own process (``--jobs``), and prints them in their order here.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings

from properties.benches import BENCHES
from properties.lockstep import ACCEPTS_INPUT, REFINEMENT, SAME_ACTION, STAYS_PUT, LockstepFailure
from properties.machines import lockstep_machine, run_machine
from properties.scenarios import SCENARIOS
from reference.broker import Broker
from reference.commitlog import CommitLog
from reference.commitservice import CommitRealTimeService
from reference.executor import BrokerFixedThreadPoolExecutor, WorkerThread
from reference.fastfailure import BrokerFastFailure
from reference.messagestore import DefaultMessageStore
from reference.processors import SendMessageProcessor
from reference.ratelimit import TokenBucketRateLimiter
from reference.ratelimithandler import RateLimitHandler
from reference.remoting import NettyRemotingServer, Writer
from reference.requests import QueueItem, RemotingCommand, RequestTask, cast_runnable
from reference.store import MappedFile, TransientStorePool
from spec.actors import Action
from spec.codes import RequestCode, ResponseCode, ResponseKind
from spec.profiles import ExecutorName
from spec.releases import PROFILES

ALL = tuple(sorted(PROFILES))

# -- Dispatch --------------------------------------------------------------------------------------------


class OverloadAnsweredToOneway(NettyRemotingServer):
    """[OVERLOAD] written to a oneway request (the dispatcher's ``!isOnewayRPC()`` guard forgotten)."""

    expected = REFINEMENT
    benches = ("dispatch",)

    def oneway_answer_written(self, writer: Writer, kind: ResponseKind) -> bool:
        return True if kind is ResponseKind.OVERLOAD else super().oneway_answer_written(writer, kind)


class RejectRequestAnsweredToOnewayIn533(NettyRemotingServer):
    """[REJECTREQUEST] written to a oneway request in 5.1.0+, where writeResponse drops it (corner 8)."""

    expected = REFINEMENT
    benches = ("whole",)
    versions = ("5.3.3",)
    scenarios = ()

    def oneway_answer_written(self, writer: Writer, kind: ResponseKind) -> bool:
        return True if kind is ResponseKind.REJECT_REQUEST else super().oneway_answer_written(writer, kind)


class QueueCapacityOffByOne(BrokerFixedThreadPoolExecutor):
    """``offer`` accepts one element past the capacity (``<=`` for ``<``): the bound lets one more in."""

    expected = "no_queue_exceeds_its_capacity"
    benches = ("dispatch",)

    def queue_has_room(self) -> bool:
        return self.capacity is None or len(self.queue) <= self.capacity


class SubmitAlwaysQueues(BrokerFixedThreadPoolExecutor):
    """A submit never starts a core thread (corner 9 ignored): tasks queue with no thread to run them."""

    expected = SAME_ACTION
    benches = ("lock",)  # two send threads: the second submit must start a thread

    def should_start_worker(self) -> bool:
        return False if self.workers else super().should_start_worker()


class RejectRemarkWithASpace(NettyRemotingServer):
    """The rust port's ``[REJECT REQUEST]`` remark, with a space (docs/sources.md, the rust port)."""

    expected = "responses_carry_the_profile_code_and_remark"
    benches = ("whole",)
    scenarios = ("page_cache_busy_rejects_and_drains",)

    def reject_request_remark(self) -> str:
        return "[REJECT REQUEST]system busy, start flow control for a while"


# -- Busy detection and the put lock ------------------------------------------------------------------


class BusyBoundNonStrict(DefaultMessageStore):
    """``diff >= osPageCacheBusyTimeOutMills`` for ``>``: the broker turns busy one millisecond early."""

    expected = "pcbusy_answers_only_while_busy"
    # The lock machine seldom holds the lock exactly the busy timeout when a check runs (measured:
    # not within the budget), so the 1000 ms scenario, where the hold is exactly 1000 ms, is the catcher.
    benches = ()
    scenarios = ("send_queue_backed_up_past_200ms_times_out",)

    def is_os_page_cache_busy(self) -> bool:
        begin = self.commit_log.begin_time_in_lock
        return begin != 0 and self.broker.config.os_page_cache_busy_timeout_ms <= self.broker.now - begin < 10_000_000


class IdleLockCountsAsBusy(DefaultMessageStore):
    """``beginTimeInLock == 0`` not treated as idle: on a small clock ``now - 0`` looks like a long hold (corner 2)."""

    expected = SAME_ACTION
    benches = ("lock", "whole")

    def is_os_page_cache_busy(self) -> bool:
        diff = self.broker.now - self.commit_log.begin_time_in_lock
        return self.broker.config.os_page_cache_busy_timeout_ms < diff < 10_000_000


class ResetMissingOnExceptionPath(CommitLog):
    """4.9.3–4.9.8 without fix c6aeb782e5: an exception inside the lock leaves beginTimeInLock set."""

    expected = "begin_time_is_zero_when_lock_is_free"
    benches = ("lock",)
    versions = ("4.9.8",)

    def reset_begin_time_on_exception(self) -> bool:
        return False


class PcSynchronizedCodeOfOldVersions(SendMessageProcessor):
    """[PC_SYNCHRONIZED] answered SYSTEM_ERROR in 5.3.0+, where ISSUE #8053 made it SYSTEM_BUSY."""

    expected = "responses_carry_the_profile_code_and_remark"
    benches = ("lock",)
    versions = ("5.3.3",)
    scenarios = ("slow_put_answers_pc_synchronized",)

    def page_cache_busy_answer(self, code: int) -> tuple[ResponseCode, str]:
        _, remark = super().page_cache_busy_answer(code)
        return ResponseCode.SYSTEM_ERROR, remark


# -- TransientStorePool and the commit service ------------------------------------------------------


class BufferReturnedToTail(TransientStorePool):
    """``offerLast`` for ``offerFirst``: buffers are reused FIFO instead of LIFO (corner 32)."""

    expected = REFINEMENT
    benches = ("pool",)

    def return_buffer(self, buffer: int) -> None:
        self.available_buffers.append(buffer)


class BufferReturnedTwice(TransientStorePool):
    """A buffer offered back twice (no duplicate check in Java): two files will write one memory region."""

    expected = "lent_and_available_buffers_partition_the_pool"
    benches = ("pool",)

    def return_buffer(self, buffer: int) -> None:
        super().return_buffer(buffer)
        super().return_buffer(buffer)


class DeficientWhenOneLeft(DefaultMessageStore):
    """Deficiency as "few left" (``<= 1``) instead of exactly zero (corner 30)."""

    expected = "reject_request_answers_only_while_busy_or_deficient"
    benches = ("pool",)

    def is_transient_store_pool_deficient(self) -> bool:
        return self.broker.config.pool_enabled and self.transient_store_pool.available_buffer_nums() <= 1


class BufferReturnedAfterEveryCommit(CommitRealTimeService):
    """rocketmq-rust (by reading): the buffer goes back after every commit, not when the file is full."""

    expected = STAYS_PUT  # the commit service moves when the spec says it has nothing to do
    benches = ("pool",)

    def buffer_due_back(self, file: MappedFile) -> bool:
        return True


class EmptyPoolFailsInsteadOfMmap(TransientStorePool):
    """rocketmq-rust: creating a file with an empty pool fails ("no available buffer"); Java writes to the mmap."""

    expected = ACCEPTS_INPUT
    benches = ("pool",)

    def borrow_buffer(self) -> int | None:
        buffer = super().borrow_buffer()
        if buffer is None:
            raise RuntimeError("transient store pool has no available buffer")
        return buffer


# -- BrokerFastFailure -------------------------------------------------------------------------------


class StrictTimeoutTest(BrokerFastFailure):
    """``behind > maxWait`` for ``>=`` (corner 20): a task exactly at its wait is left queued."""

    expected = SAME_ACTION
    benches = ("fastfailure", "whole")
    scenarios = ("clean_expired_request_in_queue",)

    def is_expired(self, task: RequestTask, now: int, max_wait_ms: int) -> bool:
        return now - task.create_timestamp > max_wait_ms


class PcbusyDrainChecksAge(BrokerFastFailure):
    """Phase 1 with an age check (corner 13): only sends older than the send wait are drained while busy."""

    expected = SAME_ACTION
    # The machines rarely drain a young send while busy within the budget (measured): the scenario
    # with a 60000 ms wait is the catcher.
    benches = ()
    scenarios = ("page_cache_busy_cleans_send_queue_without_waiting",)

    def phase_one_takes(self, head: QueueItem) -> bool:
        task = cast_runnable(head)
        return task is None or self.is_expired(task, self.broker.now, self.wait_for(ExecutorName.SEND))


class CleansPastYoungHead(BrokerFastFailure):
    """The scan looks past a young head for an older task (timestamps are not monotone, corner 21)."""

    expected = SAME_ACTION
    benches = ("fastfailure",)
    scenarios = ("head_not_expired_stops_timeout_cleanup",)

    def find_expired(self, queue: deque[QueueItem], max_wait_ms: int, now: int) -> QueueItem | None:
        for item in queue:
            task = cast_runnable(item)
            if task is None or task.stop_run:
                return None
            if self.is_expired(task, now, max_wait_ms):
                return item
        return None


class StoppedHeadSkipped(BrokerFastFailure):
    """rocketmq-rust: a completed or foreign head is skipped and the expired task behind it cleaned (corner 22)."""

    expected = SAME_ACTION
    benches = ("fastfailure",)
    scenarios = ("foreign_head_blocks_the_scan",)

    def find_expired(self, queue: deque[QueueItem], max_wait_ms: int, now: int) -> QueueItem | None:
        for item in queue:
            task = cast_runnable(item)
            if task is None or task.stop_run:
                continue
            return item if self.is_expired(task, now, max_wait_ms) else None
        return None


class OneNowPerScan(BrokerFastFailure):
    """rocketmq-rust: ``now`` read once per run, not for every head (corner 25)."""

    expected = "timeout_answers_only_after_the_queue_wait"  # the remark's period is not now - createTimestamp
    benches = ("fastfailure",)
    scenarios = ("send_queue_backed_up_past_200ms_times_out",)

    def fast_failure_now(self, run_started_at: int) -> int:
        return run_started_at


class QueueSizeBeforeRemoval(BrokerFastFailure):
    """rocketmq-rust: the remark's "size of queue" counts the removed task too (corner 18)."""

    expected = "pcbusy_answers_only_while_busy"  # both remarks report the size; phase 1 comes first
    benches = ("fastfailure",)
    scenarios = ("send_queue_backed_up_past_200ms_times_out",)

    def reported_queue_size(self, queue: deque[QueueItem]) -> int:
        return len(queue) + 1


class ScanCappedAt256(BrokerFastFailure):
    """rocketmq-rust: at most 256 heads per queue per run (DEFAULT_SCAN_BATCH_LIMIT); Java has no cap."""

    expected = SAME_ACTION
    benches = ()
    versions = ("4.9.8",)
    scenarios = ("timeout_cleanup_cleans_every_expired_head_in_one_run",)

    def fast_failure_scan_limit(self) -> int | None:
        return 256


class FixedDelaySchedule(BrokerFastFailure):
    """rocketmq-rust: fixed delay (the next run one period after this one ends) instead of fixed rate (corner 27)."""

    expected = REFINEMENT
    benches = ("fastfailure", "whole")

    def next_fast_failure_run(self, scheduled: int) -> int:
        return self.broker.now + self.broker.config.fast_failure_period_ms


class SwitchIgnored(BrokerFastFailure):
    """brokerFastFailureEnable ignored (4.0.0–4.1.0 behaviour in a 4.2.0+ broker)."""

    expected = SAME_ACTION
    benches = ("dispatch",)
    scenarios = ("disabled_switch_ticks_but_does_not_clean",)

    def fast_failure_switch_on(self) -> bool:
        return True


class StopRunTaskStillRuns(BrokerFixedThreadPoolExecutor):
    """``RequestTask.run`` without the ``if (!stopRun)`` check: a task answered [TIMEOUT_CLEAN_QUEUE] still
    writes its message (corner 26). No broker path queues a stopRun task, so only the white-box
    scenario, like RocketMQ's unit test, reaches it."""

    expected = "every_request_is_in_exactly_one_place"  # the answered request is also on a worker
    benches = ()
    scenarios = ("cancelled_task_does_nothing",)

    def task_should_run(self, task: RequestTask) -> bool:
        return True


class TakeWithoutBookkeeping(BrokerFixedThreadPoolExecutor):
    """A worker takes the head without keeping it as its current task: the request is lost, never answered."""

    expected = "every_request_is_in_exactly_one_place"
    benches = ("whole", "dispatch")

    def get_task(self, worker: WorkerThread) -> Action:
        action = super().get_task(worker)
        worker.task = None
        return action


# -- The limiter (source 004) -----------------------------------------------------------------------------


class _GuavaTryAcquire(TokenBucketRateLimiter):
    """Plain Guava ``tryAcquire()``: check ``canAcquire`` first and reserve only on success; no breaker."""

    def acquire(self, now_ms: int) -> bool:
        now_micros = self.read_micros(now_ms)
        if self.next_free_ticket_micros > now_micros:
            self.last_need_wait_micros = self.next_free_ticket_micros - now_micros
            return False
        self.last_need_wait_micros = self._reserve_and_get_wait_length(1, now_micros)
        return True


class CanAcquireBeforeReserve(RateLimitHandler):
    """The limiter as plain Guava (canAcquire, then reserve) instead of the article's reserve-then-break."""

    expected = REFINEMENT
    benches = ("limiter",)
    scenarios = ("retry_storm_with_rate_limit_serves_other_topics",)

    def create_rate_limiter(self, permits_per_second: float) -> TokenBucketRateLimiter:
        return _GuavaTryAcquire(permits_per_second, self.broker.now, self.broker.config.rate_limit.circuit_breaker_open_micros)


class RetryTopicNotLimited(RateLimitHandler):
    """The limiter skips %RETRY% topics (as PR #7298's pipeline does): the retry storm is not limited."""

    expected = SAME_ACTION
    benches = ("limiter",)
    scenarios = ("retry_storm_with_rate_limit_serves_other_topics",)

    def rate_limit_applies(self, command: RemotingCommand) -> bool:
        return super().rate_limit_applies(command) and not command.topic.startswith("%RETRY%")


MUTANTS: tuple[type, ...] = (
    OverloadAnsweredToOneway,
    RejectRequestAnsweredToOnewayIn533,
    QueueCapacityOffByOne,
    SubmitAlwaysQueues,
    RejectRemarkWithASpace,
    BusyBoundNonStrict,
    IdleLockCountsAsBusy,
    ResetMissingOnExceptionPath,
    PcSynchronizedCodeOfOldVersions,
    BufferReturnedToTail,
    BufferReturnedTwice,
    DeficientWhenOneLeft,
    BufferReturnedAfterEveryCommit,
    EmptyPoolFailsInsteadOfMmap,
    StrictTimeoutTest,
    PcbusyDrainChecksAge,
    CleansPastYoungHead,
    StoppedHeadSkipped,
    OneNowPerScan,
    QueueSizeBeforeRemoval,
    ScanCappedAt256,
    FixedDelaySchedule,
    SwitchIgnored,
    StopRunTaskStillRuns,
    TakeWithoutBookkeeping,
    CanAcquireBeforeReserve,
    RetryTopicNotLimited,
)

#: The budget of one machine run against a mutant: fixed, derandomized, and stopping at the first
#: failure (no shrinking) so that the time measured is the time to catch.
MUTANT_SETTINGS = settings(
    max_examples=100,
    stateful_step_count=50,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],
    report_multiple_bugs=False,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)


@dataclass(frozen=True)
class Verdict:
    """How one mutant fared."""

    mutant: str
    caught_by: str | None  # the check that failed, or None if the mutant survived
    where: str  # the machine or scenario that caught it (or what was tried)
    seconds: float  # time to the first failure (or of the whole attempt)


def judge(mutant: type) -> Verdict:
    """Run ``mutant``'s machines, then its scenarios, until one catches it."""
    broker = Broker.with_part(mutant)
    started = time.perf_counter()
    versions = getattr(mutant, "versions", ALL)
    tried: list[str] = []
    for bench in getattr(mutant, "benches", ()):
        for version in versions:
            where = f"{bench} machine, {version}"
            tried.append(where)
            try:
                run_machine(lockstep_machine(BENCHES[bench], PROFILES[version], broker), MUTANT_SETTINGS)
            except LockstepFailure as e:
                return Verdict(mutant.__name__, e.check, where, time.perf_counter() - started)
    for name in getattr(mutant, "scenarios", ()):
        scenario = SCENARIOS[name]
        for version in (v for v in scenario.versions if v in versions):
            where = f"scenario {name}, {version}"
            tried.append(where)
            try:
                scenario.run(PROFILES[version], broker)
            except LockstepFailure as e:
                return Verdict(mutant.__name__, e.check, where, time.perf_counter() - started)
            except AssertionError as e:
                return Verdict(mutant.__name__, f"scenario assertion: {str(e).splitlines()[0]}", where, time.perf_counter() - started)
    return Verdict(mutant.__name__, None, "; ".join(tried) or "nothing to run", time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    """Judge every mutant; print one line each and the score; non-zero if any survives."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="mutants judged at a time, each in its own process (default: 2)")
    jobs = max(parser.parse_args(argv).jobs, 1)
    started = time.perf_counter()
    verdicts = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for mutant, v in zip(MUTANTS, pool.map(judge, MUTANTS)):
            verdicts.append(v)
            expected = getattr(mutant, "expected", "?")
            if v.caught_by is None:
                print(f"SURVIVED {v.mutant:<36} expected {expected}; tried {v.where} ({v.seconds:.1f}s)", flush=True)
            else:
                note = "" if v.caught_by == expected else f" (expected {expected})"
                print(f"caught   {v.mutant:<36} by {v.caught_by}{note} in {v.where}, {v.seconds:.2f}s", flush=True)
    caught = [v for v in verdicts if v.caught_by is not None]
    times = sorted(v.seconds for v in caught)
    if times:
        print(f"time to catch: median {times[len(times) // 2]:.2f}s, worst {times[-1]:.2f}s")
    print(f"total {time.perf_counter() - started:.1f}s ({jobs} at a time)")
    print(f"caught {len(caught)} of {len(verdicts)} mutants")
    return 0 if len(caught) == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
