"""Which broker thread takes each action: the ``Actor:`` of every action, as data.

A driver that runs an implementation beside the spec steps one thread at a time and compares
what that thread did with what the spec allows it; this module names the threads and maps each
action to its thread (None for an input from the environment or an injected fault).
"""

from __future__ import annotations

from typing import assert_never

from spec.actions import (
    Action,
    ClockAdvances,
    CommitServiceCommits,
    CommitServiceReturnsBuffer,
    DispatchAnswersNotSupported,
    DispatchCreatesTask,
    DispatchQueuesTask,
    DispatchRejectsOverload,
    DispatchRejectsRequest,
    DispatchStartsWorker,
    FastFailureCleansExpiredHead,
    FastFailureDrainsBusySendQueue,
    FastFailureDropsForeignElement,
    FastFailureEndsBusyDrain,
    FastFailureSkipsRun,
    FastFailureStartsRun,
    FastFailureStopsAtHead,
    HaServiceAcquiresPutLock,
    HaServiceReleasesPutLock,
    InternalTaskSubmitted,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
    RateLimitHandlerAdmits,
    RateLimitHandlerFailsOpen,
    RateLimitHandlerThrottles,
    RequestArrives,
    WorkerAcquiresPutLock,
    WorkerAppendsAndUnlocks,
    WorkerCreatesMappedFile,
    WorkerDiscardsCancelledTask,
    WorkerFindsPageCacheBusy,
    WorkerPassesPutCheck,
    WorkerProcessesRequest,
    WorkerRunsForeignTask,
    WorkerTakesTask,
    WorkerThrowsInsideLock,
)
from spec.config import BrokerConfig
from spec.frozen import record
from spec.profiles import ExecutorName
from spec.state import BrokerState


@record
class IoThreadId:
    """A remoting thread."""

    index: int


@record
class WorkerId:
    """A thread of an executor, numbered in creation order (it may not have been started yet)."""

    executor: ExecutorName
    index: int


@record
class CommitServiceId:
    """CommitRealTimeService's thread."""


@record
class FastFailureId:
    """BrokerFastFailureScheduledThread."""


ThreadId = IoThreadId | WorkerId | CommitServiceId | FastFailureId
COMMIT_SERVICE = CommitServiceId()
FAST_FAILURE = FastFailureId()


def thread_of(a: Action) -> ThreadId | None:
    """The broker thread whose atomic step ``a`` is; None for an environment input or an injected fault."""
    match a:
        case (
            RequestArrives()
            | RateLimitHandlerFailsOpen()
            | WorkerThrowsInsideLock()
            | ClockAdvances()
            | OperatorSetsFastFailureEnable()
            | OperatorSetsQueueWait()
            | InternalTaskSubmitted()
            | HaServiceAcquiresPutLock()
            | HaServiceReleasesPutLock()
        ):
            return None
        case (
            RateLimitHandlerAdmits()
            | RateLimitHandlerThrottles()
            | DispatchAnswersNotSupported()
            | DispatchRejectsRequest()
            | DispatchCreatesTask()
            | DispatchStartsWorker()
            | DispatchQueuesTask()
            | DispatchRejectsOverload()
        ):
            return IoThreadId(a.io_thread)
        case (
            WorkerTakesTask()
            | WorkerDiscardsCancelledTask()
            | WorkerRunsForeignTask()
            | WorkerProcessesRequest()
            | WorkerFindsPageCacheBusy()
            | WorkerPassesPutCheck()
            | WorkerAcquiresPutLock()
            | WorkerCreatesMappedFile()
            | WorkerAppendsAndUnlocks()
        ):
            return WorkerId(a.executor, a.worker)
        case CommitServiceCommits() | CommitServiceReturnsBuffer():
            return COMMIT_SERVICE
        case (
            FastFailureStartsRun()
            | FastFailureSkipsRun()
            | FastFailureDrainsBusySendQueue()
            | FastFailureDropsForeignElement()
            | FastFailureEndsBusyDrain()
            | FastFailureCleansExpiredHead()
            | FastFailureStopsAtHead()
        ):
            return FAST_FAILURE
        case _:
            assert_never(a)


def threads_of(s: BrokerState) -> list[ThreadId]:
    """Every broker thread that exists in ``s``."""
    threads: list[ThreadId] = [IoThreadId(i) for i in range(len(s.io_threads))]
    threads += [WorkerId(e.name, i) for e in s.executors for i in range(len(e.workers))]
    return threads + [COMMIT_SERVICE, FAST_FAILURE]


def all_threads(config: BrokerConfig) -> list[ThreadId]:
    """Every thread a broker with this configuration can have."""
    threads: list[ThreadId] = [IoThreadId(i) for i in range(config.io_threads)]
    threads += [WorkerId(e.name, i) for e in config.executors for i in range(e.threads)]
    return threads + [COMMIT_SERVICE, FAST_FAILURE]
