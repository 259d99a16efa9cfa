"""Naming the reference broker's threads, and asking it to take a spec action.

A driver that runs the spec and the reference side by side needs two things: which thread an
action belongs to (so it can step that thread and compare what the thread did with what the
spec allows), and a way to feed an input or fault to the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from reference.broker import Broker
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
from spec.profiles import ExecutorName


@dataclass(frozen=True)
class IoThreadId:
    """A remoting thread."""

    index: int


@dataclass(frozen=True)
class WorkerId:
    """A thread of an executor (it may not have been started yet)."""

    executor: ExecutorName
    index: int


@dataclass(frozen=True)
class CommitServiceId:
    """CommitRealTimeService."""


@dataclass(frozen=True)
class FastFailureId:
    """BrokerFastFailureScheduledThread."""


ThreadId = IoThreadId | WorkerId | CommitServiceId | FastFailureId


def all_threads(config: BrokerConfig) -> list[ThreadId]:
    """Every thread a broker with this configuration can have."""
    threads: list[ThreadId] = [IoThreadId(i) for i in range(config.io_threads)]
    threads += [WorkerId(e.name, i) for e in config.executors for i in range(e.threads)]
    return threads + [CommitServiceId(), FastFailureId()]


def step_thread(broker: Broker, thread: ThreadId) -> Action | None:
    """Take ``thread``'s next step; the action it performed, or None if it cannot move."""
    match thread:
        case IoThreadId(index):
            return broker.step_io_thread(index)
        case WorkerId(executor, index):
            return broker.step_worker(executor, index)
        case CommitServiceId():
            return broker.step_commit_service()
        case FastFailureId():
            return broker.step_fast_failure()
        case _:
            assert_never(thread)


IO_THREAD_ACTIONS = (
    RateLimitHandlerAdmits,
    RateLimitHandlerThrottles,
    DispatchAnswersNotSupported,
    DispatchRejectsRequest,
    DispatchCreatesTask,
    DispatchStartsWorker,
    DispatchQueuesTask,
    DispatchRejectsOverload,
)
WORKER_ACTIONS = (
    WorkerTakesTask,
    WorkerDiscardsCancelledTask,
    WorkerRunsForeignTask,
    WorkerProcessesRequest,
    WorkerFindsPageCacheBusy,
    WorkerPassesPutCheck,
    WorkerAcquiresPutLock,
    WorkerCreatesMappedFile,
    WorkerAppendsAndUnlocks,
)
COMMIT_SERVICE_ACTIONS = (CommitServiceCommits, CommitServiceReturnsBuffer)
FAST_FAILURE_ACTIONS = (
    FastFailureStartsRun,
    FastFailureSkipsRun,
    FastFailureDrainsBusySendQueue,
    FastFailureDropsForeignElement,
    FastFailureEndsBusyDrain,
    FastFailureCleansExpiredHead,
    FastFailureStopsAtHead,
)
INPUT_ACTIONS = (
    RequestArrives,
    RateLimitHandlerFailsOpen,
    WorkerThrowsInsideLock,
    ClockAdvances,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
    InternalTaskSubmitted,
    HaServiceAcquiresPutLock,
    HaServiceReleasesPutLock,
)
"""Actions that are inputs or faults, not a thread's own next step."""


def thread_of(action: Action) -> ThreadId | None:
    """The thread whose own next step ``action`` is; None for an input or a fault."""
    if isinstance(action, IO_THREAD_ACTIONS):
        return IoThreadId(action.io_thread)
    if isinstance(action, WORKER_ACTIONS):
        return WorkerId(action.executor, action.worker)
    if isinstance(action, COMMIT_SERVICE_ACTIONS):
        return CommitServiceId()
    if isinstance(action, FAST_FAILURE_ACTIONS):
        return FastFailureId()
    assert isinstance(action, INPUT_ACTIONS), f"{action!r} has no actor"
    return None


def perform(broker: Broker, action: Action) -> Action | None:
    """Have the reference take ``action``: an input or fault is applied as given (StepRefused if it
    cannot be); a thread's action steps that thread and returns what the thread actually did."""
    thread = thread_of(action)
    if thread is not None:
        return step_thread(broker, thread)
    match action:
        case RequestArrives(io_thread, code, topic, oneway):
            broker.request_arrives(io_thread, code, topic, oneway)
        case RateLimitHandlerFailsOpen(io_thread):
            broker.rate_limit_handler_fails_open(io_thread)
        case WorkerThrowsInsideLock(executor, worker):
            broker.worker_throws_inside_lock(executor, worker)
        case ClockAdvances(ms):
            broker.clock_advances(ms)
        case OperatorSetsFastFailureEnable(enabled):
            broker.operator_sets_fast_failure_enable(enabled)
        case OperatorSetsQueueWait(queue, wait_ms):
            broker.operator_sets_queue_wait(queue, wait_ms)
        case InternalTaskSubmitted(executor):
            broker.internal_task_submitted(executor)
        case HaServiceAcquiresPutLock():
            broker.ha_service_acquires_put_lock()
        case HaServiceReleasesPutLock():
            broker.ha_service_releases_put_lock()
        case _:
            raise AssertionError(f"{action!r} belongs to a thread, not to the environment")
    return action
