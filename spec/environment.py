"""The broker's environment: the clock, an operator changing settings, broker-internal
submissions, and the HA service's use of the put lock.

Source: S/CommitLog.java appendData (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1391-L1404) (HA holds the put lock without stamping it, corner 5);
B/BrokerController updateBrokerConfig (dynamic settings read each fast-failure run, corner 27).
"""

from __future__ import annotations


from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.profiles import ExecutorName
from spec.putlock import HA_SERVICE, acquire_for_ha, release_for_ha
from spec.state import NO_OUTPUTS, BrokerState, ForeignTask, Next, with_executor
from spec.actors import EnvironmentInput


@record
class ClockAdvances(EnvironmentInput):
    """Time passes.

    Changes: now
    """

    ms: int


def clock_advances_enabled(config: BrokerConfig, s: BrokerState, a: ClockAdvances) -> bool:
    """Guard: time moves forward.

    Simplification: the wall clock never steps back (a negative diff is "not busy" in Java).
    Source: SystemClock.now (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/common/src/main/java/org/apache/rocketmq/common/SystemClock.java#L20-L22): a monotonic wall clock (the spec leaves out steps back).
    """
    return a.ms > 0


def clock_advances(config: BrokerConfig, s: BrokerState, a: ClockAdvances) -> Next:
    """Effect: now += ms."""
    return replace(s, now=s.now + a.ms), NO_OUTPUTS


@record
class OperatorSetsFastFailureEnable(EnvironmentInput):
    """An operator changes brokerFastFailureEnable at run time (updateBrokerConfig).

    Changes: fast_failure_enable
    """

    enabled: bool


def operator_sets_fast_failure_enable_enabled(
    config: BrokerConfig, s: BrokerState, a: OperatorSetsFastFailureEnable
) -> bool:
    """Guard: the value changes.

    Source: AdminBrokerProcessor.updateBrokerConfig (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java#L1015-L1059): brokerFastFailureEnable is a dynamic setting.
    """
    return s.fast_failure_enable != a.enabled


def operator_sets_fast_failure_enable(
    config: BrokerConfig, s: BrokerState, a: OperatorSetsFastFailureEnable
) -> Next:
    """Effect: brokerFastFailureEnable = enabled; the next run reads it."""
    return replace(s, fast_failure_enable=a.enabled), NO_OUTPUTS


@record
class OperatorSetsQueueWait(EnvironmentInput):
    """An operator changes a waitTimeMillsIn*Queue at run time.

    Changes: queue_waits
    """

    queue: ExecutorName
    wait_ms: int


def operator_sets_queue_wait_enabled(config: BrokerConfig, s: BrokerState, a: OperatorSetsQueueWait) -> bool:
    """Guard: the queue is cleaned and its wait changes.

    Source: AdminBrokerProcessor.updateBrokerConfig (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java#L1015-L1059): waitTimeMillsIn*Queue are dynamic settings
    (corner 27).
    """
    return any(q is a.queue and w != a.wait_ms for q, w in s.queue_waits)


def operator_sets_queue_wait(config: BrokerConfig, s: BrokerState, a: OperatorSetsQueueWait) -> Next:
    """Effect: waitTimeMillsIn<queue>Queue = wait_ms; read by the next phase-2 scan of that queue
    (getter each tick in 4.2.0–5.2.0, Supplier from 5.3.0)."""
    return replace(s, queue_waits=tuple((q, a.wait_ms if q is a.queue else w) for q, w in s.queue_waits)), NO_OUTPUTS


@record
class InternalTaskSubmitted(EnvironmentInput):
    """Broker code submits a task that is not a RequestTask to an executor whose threads all exist.

    Changes: executors, next_foreign_id
    """

    executor: ExecutorName


def internal_task_submitted_enabled(config: BrokerConfig, s: BrokerState, a: InternalTaskSubmitted) -> bool:
    """Guard: the executor exists, all its threads are started, and its queue has room.

    Source: ThreadPoolExecutor.execute (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html#execute(java.lang.Runnable)) (offer) for a non-RequestTask submitted by broker code.
    """
    if not any(e.name is a.executor for e in config.executors):
        return False
    executor, shape = s.executor(a.executor), config.executor(a.executor)
    room = shape.capacity is None or len(executor.queue) < shape.capacity
    return len(executor.workers) >= shape.threads and room


def internal_task_submitted(config: BrokerConfig, s: BrokerState, a: InternalTaskSubmitted) -> Next:
    """Effect: a plain FutureTask (4.x ``submit`` of a non-RequestTask) joins the queue's tail.

    Source: BrokerFastFailure.castRunnable (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L69-L80)
    unwraps only a FutureTaskExt of a RequestTask; the 4.2.0+ unit test BrokerFastFailureTest adds a
    plain Runnable to the queue.
    Simplification: the submit is only modelled once all threads exist (before that it would
    run on a new thread and never be seen by a queue).
    """
    executor = s.executor(a.executor)
    executor = replace(executor, queue=executor.queue + (ForeignTask(s.next_foreign_id),))
    return replace(with_executor(s, executor), next_foreign_id=s.next_foreign_id + 1), NO_OUTPUTS


@record
class HaServiceAcquiresPutLock(EnvironmentInput):
    """The HA service's ``CommitLog.appendData`` takes the put lock (without stamping it).

    Changes: lock
    """


def ha_service_acquires_put_lock_enabled(config: BrokerConfig, s: BrokerState, a: HaServiceAcquiresPutLock) -> bool:
    """Guard: the lock is free.

    Source: S/CommitLog.java appendData (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1391-L1404): ``putMessageLock.lock()`` (corner 5).
    """
    return s.lock.holder is None


def ha_service_acquires_put_lock(config: BrokerConfig, s: BrokerState, a: HaServiceAcquiresPutLock) -> Next:
    """Effect: the HA service holds the lock; beginTimeInLock is untouched, so a long replication
    append blocks producers with no "busy" signal (corner 5)."""
    return replace(s, lock=acquire_for_ha(s.lock)), NO_OUTPUTS


@record
class HaServiceReleasesPutLock(EnvironmentInput):
    """``appendData`` finishes and unlocks.

    Changes: lock
    """


def ha_service_releases_put_lock_enabled(config: BrokerConfig, s: BrokerState, a: HaServiceReleasesPutLock) -> bool:
    """Guard: the HA service holds the lock.

    Source: S/CommitLog.java appendData (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1391-L1404): ``putMessageLock.unlock()`` in finally (corner 5).
    """
    return s.lock.holder == HA_SERVICE


def ha_service_releases_put_lock(config: BrokerConfig, s: BrokerState, a: HaServiceReleasesPutLock) -> Next:
    """Effect: unlock."""
    return replace(s, lock=release_for_ha(s.lock)), NO_OUTPUTS
