"""Driving an implementation one spec action at a time: the broker-side half of a lockstep.

A driver that runs the spec and an implementation side by side steps one thread at a time
(:mod:`spec.actors` says which thread an action belongs to) and compares what that thread did
with what the spec allows; inputs and faults are fed as they are. Any implementation with the
methods of :class:`BrokerUnderTest` can be driven: the reference broker, or a mutant of it.
"""

from __future__ import annotations

from typing import Protocol, assert_never

from spec.actors import Action, CommitServiceId, FastFailureId, IoThreadId, ThreadId, WorkerId, thread_of
from spec.environment import (
    ClockAdvances,
    HaServiceAcquiresPutLock,
    HaServiceReleasesPutLock,
    InternalTaskSubmitted,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
)
from spec.profiles import ExecutorName
from spec.remoting import RateLimitHandlerFailsOpen, RequestArrives
from spec.state import BrokerState, Outputs
from spec.workers import WorkerThrowsInsideLock


class BrokerUnderTest(Protocol):
    """The implementation's side of the lockstep: the public methods of reference.broker.Broker."""

    def request_arrives(self, io_thread: int, code: int, topic: str, oneway: bool) -> None: ...
    def clock_advances(self, ms: int) -> None: ...
    def operator_sets_fast_failure_enable(self, enabled: bool) -> None: ...
    def operator_sets_queue_wait(self, queue: ExecutorName, wait_ms: int) -> None: ...
    def internal_task_submitted(self, executor: ExecutorName) -> None: ...
    def ha_service_acquires_put_lock(self) -> None: ...
    def ha_service_releases_put_lock(self) -> None: ...
    def worker_throws_inside_lock(self, executor: ExecutorName, worker: int) -> None: ...
    def rate_limit_handler_fails_open(self, io_thread: int) -> None: ...
    def step_io_thread(self, io_thread: int) -> Action | None: ...
    def step_worker(self, executor: ExecutorName, worker: int) -> Action | None: ...
    def step_commit_service(self) -> Action | None: ...
    def step_fast_failure(self) -> Action | None: ...
    def observe(self) -> BrokerState: ...

    @property
    def outputs(self) -> Outputs:
        """What the last step wrote, finished silently and started (the spec's :class:`Outputs`)."""
        ...


def step_thread(broker: BrokerUnderTest, thread: ThreadId) -> Action | None:
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


def feed_environment(broker: BrokerUnderTest, a: Action) -> None:
    """Give the implementation an environment input or fault (an action with no broker thread)."""
    match a:
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
            raise ValueError(f"{a!r} is a thread's step, not an environment input")


def perform(broker: BrokerUnderTest, a: Action) -> Action | None:
    """Have the implementation take ``a``: an input or fault is applied as given (and reports
    itself); a thread's action steps that thread and returns what the thread actually did."""
    thread = thread_of(a)
    if thread is None:
        feed_environment(broker, a)
        return a
    return step_thread(broker, thread)
