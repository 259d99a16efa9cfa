"""Actions: one per atomic step of one of the broker's threads, or of its environment.

Each action is a frozen record named actor-first. Its docstring says what happens in the broker,
which thread does it (``Actor:``) and which state fields it may change (``Changes:``; a generic
test checks that no other field changes). The guard and the effect, each with its ``Source:``
line, are in the actor's module: :mod:`spec.remoting`, :mod:`spec.workers`,
:mod:`spec.commitservice`, :mod:`spec.fastfailure`, :mod:`spec.environment`.
"""

from __future__ import annotations


from spec.codes import RequestCode
from spec.frozen import record
from spec.profiles import ExecutorName

# -- Remoting (IO) threads ---------------------------------------------------------------------


@record
class RequestArrives:
    """A producer's or consumer's request is decoded on an idle remoting thread.

    Actor: remoting
    Changes: io_threads, next_request_id
    """

    io_thread: int
    code: RequestCode
    topic: str
    oneway: bool


@record
class RateLimitHandlerAdmits:
    """Source 004's RateLimitHandler takes a permit from the topic's bucket and passes the request on.

    Actor: remoting
    Changes: io_threads, buckets
    """

    io_thread: int


@record
class RateLimitHandlerThrottles:
    """The topic's bucket denies the request: SYSTEM_BUSY ``[RateLimit]``, written even for oneway.

    Actor: remoting
    Changes: io_threads, buckets, responses
    """

    io_thread: int


@record
class RateLimitHandlerFailsOpen:
    """The limiter's own pool rejects the task; its rejection policy passes the request on unlimited.

    Actor: remoting
    Changes: io_threads
    """

    io_thread: int


@record
class DispatchAnswersNotSupported:
    """No processor and no default processor: REQUEST_CODE_NOT_SUPPORTED from the IO thread.

    Actor: remoting
    Changes: io_threads, responses, finished_silently
    """

    io_thread: int


@record
class DispatchRejectsRequest:
    """``processor.rejectRequest()`` is true: SYSTEM_BUSY ``[REJECTREQUEST]``; no task is created.

    Actor: remoting
    Changes: io_threads, responses, finished_silently
    """

    io_thread: int


@record
class DispatchCreatesTask:
    """``new RequestTask(...)``: the request is accepted and stamped with the IO thread's clock.

    Actor: remoting
    Changes: io_threads
    """

    io_thread: int


@record
class DispatchStartsWorker:
    """``submit`` while fewer than core threads exist: a new thread runs the task; it skips the queue.

    Actor: remoting
    Changes: io_threads, executors
    """

    io_thread: int


@record
class DispatchQueuesTask:
    """``submit`` with all core threads started: the task is offered to the tail of the queue.

    Actor: remoting
    Changes: io_threads, executors
    """

    io_thread: int


@record
class DispatchRejectsOverload:
    """The queue is full: RejectedExecutionException → SYSTEM_BUSY ``[OVERLOAD]`` (not for oneway).

    Actor: remoting
    Changes: io_threads, responses, finished_silently
    """

    io_thread: int


# -- Executor worker threads -------------------------------------------------------------------


@record
class WorkerTakesTask:
    """An idle worker takes the queue head, a live RequestTask.

    Actor: worker
    Changes: executors
    """

    executor: ExecutorName
    worker: int


@record
class WorkerDiscardsCancelledTask:
    """An idle worker takes a head whose stopRun is set: ``RequestTask.run`` does nothing, sends nothing.

    Actor: worker
    Changes: executors
    """

    executor: ExecutorName
    worker: int


@record
class WorkerRunsForeignTask:
    """An idle worker takes and runs a head that is not a RequestTask.

    Actor: worker
    Changes: executors
    """

    executor: ExecutorName
    worker: int


@record
class WorkerProcessesRequest:
    """A worker runs a request that does not write to the commit log and answers it.

    Actor: worker
    Changes: executors, responses, finished_silently, started
    """

    executor: ExecutorName
    worker: int


@record
class WorkerFindsPageCacheBusy:
    """The put pre-check finds the store busy: ``[PC_SYNCHRONIZED]`` (code per profile).

    Actor: worker
    Changes: executors, responses, finished_silently, started
    """

    executor: ExecutorName
    worker: int


@record
class WorkerPassesPutCheck:
    """The put pre-check finds the store not busy; the worker goes on to the put lock.

    Actor: worker
    Changes: executors, started
    """

    executor: ExecutorName
    worker: int


@record
class WorkerAcquiresPutLock:
    """The worker takes the commit-log put lock and stamps beginTimeInLock.

    Actor: worker
    Changes: executors, lock
    """

    executor: ExecutorName
    worker: int


@record
class WorkerCreatesMappedFile:
    """Inside the lock, the current file is full (or none exists): a new file borrows a pool buffer.

    Actor: worker
    Changes: files, available_buffers
    """

    executor: ExecutorName
    worker: int


@record
class WorkerAppendsAndUnlocks:
    """The worker appends the message, resets beginTimeInLock, unlocks, and answers SUCCESS.

    Actor: worker
    Changes: executors, files, lock, responses, finished_silently
    """

    executor: ExecutorName
    worker: int


@record
class WorkerThrowsInsideLock:
    """Fault: an exception escapes the critical section; ``finally`` unlocks; SYSTEM_ERROR is answered.

    Actor: worker
    Changes: executors, lock, responses, finished_silently, exceptions_in_lock
    """

    executor: ExecutorName
    worker: int


# -- Commit service ------------------------------------------------------------------------------


@record
class CommitServiceCommits:
    """CommitRealTimeService commits the oldest file with uncommitted bytes in its write buffer.

    Actor: commit service
    Changes: files
    """


@record
class CommitServiceReturnsBuffer:
    """A commit reached the file size: the file's buffer goes back to the head of the pool.

    Actor: commit service
    Changes: files, available_buffers
    """


# -- Fast-failure scheduler ----------------------------------------------------------------------


@record
class FastFailureStartsRun:
    """A scheduled run of BrokerFastFailure begins with the switch on: phase 1 starts.

    Actor: fast failure
    Changes: fast_failure_phase, fast_failure_next_run
    """


@record
class FastFailureSkipsRun:
    """A scheduled run begins with brokerFastFailureEnable off: it does nothing.

    Actor: fast failure
    Changes: fast_failure_next_run
    """


@record
class FastFailureDrainsBusySendQueue:
    """Phase 1, store busy: poll the send queue's head and answer ``[PCBUSY_CLEAN_QUEUE]``.

    Actor: fast failure
    Changes: executors, responses
    """


@record
class FastFailureDropsForeignElement:
    """Phase 1, store busy, the polled element is not a RequestTask: it is dropped silently.

    Actor: fast failure
    Changes: executors
    """


@record
class FastFailureEndsBusyDrain:
    """Phase 1 ends: the store is not busy, or the send queue is empty. Phase 2 starts.

    Actor: fast failure
    Changes: fast_failure_phase, fast_failure_queue, fast_failure_scan_wait
    """


@record
class FastFailureCleansExpiredHead:
    """Phase 2: the queue's head waited at least the queue's max wait: remove, stopRun, ``[TIMEOUT_CLEAN_QUEUE]``.

    Actor: fast failure
    Changes: executors, responses, cancelled
    """

    queue: ExecutorName


@record
class FastFailureStopsAtHead:
    """Phase 2: the head is young, cancelled, foreign or absent: stop scanning this queue.

    Actor: fast failure
    Changes: fast_failure_phase, fast_failure_queue, fast_failure_scan_wait
    """

    queue: ExecutorName


# -- Environment: clock, operator, broker internals, replication ----------------------------------


@record
class ClockAdvances:
    """Time passes.

    Actor: clock
    Changes: now
    """

    ms: int


@record
class OperatorSetsFastFailureEnable:
    """An operator changes brokerFastFailureEnable at run time (updateBrokerConfig).

    Actor: operator
    Changes: fast_failure_enable
    """

    enabled: bool


@record
class OperatorSetsQueueWait:
    """An operator changes a waitTimeMillsIn*Queue at run time.

    Actor: operator
    Changes: queue_waits
    """

    queue: ExecutorName
    wait_ms: int


@record
class InternalTaskSubmitted:
    """Broker code submits a task that is not a RequestTask to an executor whose threads all exist.

    Actor: broker internals
    Changes: executors, next_foreign_id
    """

    executor: ExecutorName


@record
class HaServiceAcquiresPutLock:
    """The HA service's ``CommitLog.appendData`` takes the put lock (without stamping it).

    Actor: HA service
    Changes: lock
    """


@record
class HaServiceReleasesPutLock:
    """``appendData`` finishes and unlocks.

    Actor: HA service
    Changes: lock
    """


Action = (
    RequestArrives
    | RateLimitHandlerAdmits
    | RateLimitHandlerThrottles
    | RateLimitHandlerFailsOpen
    | DispatchAnswersNotSupported
    | DispatchRejectsRequest
    | DispatchCreatesTask
    | DispatchStartsWorker
    | DispatchQueuesTask
    | DispatchRejectsOverload
    | WorkerTakesTask
    | WorkerDiscardsCancelledTask
    | WorkerRunsForeignTask
    | WorkerProcessesRequest
    | WorkerFindsPageCacheBusy
    | WorkerPassesPutCheck
    | WorkerAcquiresPutLock
    | WorkerCreatesMappedFile
    | WorkerAppendsAndUnlocks
    | WorkerThrowsInsideLock
    | CommitServiceCommits
    | CommitServiceReturnsBuffer
    | FastFailureStartsRun
    | FastFailureSkipsRun
    | FastFailureDrainsBusySendQueue
    | FastFailureDropsForeignElement
    | FastFailureEndsBusyDrain
    | FastFailureCleansExpiredHead
    | FastFailureStopsAtHead
    | ClockAdvances
    | OperatorSetsFastFailureEnable
    | OperatorSetsQueueWait
    | InternalTaskSubmitted
    | HaServiceAcquiresPutLock
    | HaServiceReleasesPutLock
)
"""The closed union of every action."""

ACTION_TYPES: tuple[type, ...] = Action.__args__
"""The action classes, in the order of this module (the order of the generated tables)."""
