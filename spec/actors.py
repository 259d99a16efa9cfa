"""Who takes each action: the broker's threads, and the environment.

Every action is one atomic step of one broker thread, or something the environment does (a
request arriving, time passing, an operator, broker internals, the HA service) or injects (a
fault). An action's class says which: it derives from the base of its actor below, so the actor
is stated once, where the action is declared, and :func:`thread_of` reads it from there.

A driver that runs an implementation beside the spec steps one thread at a time and compares
what that thread did with what the spec allows it; the thread ids here name those threads.
"""

from __future__ import annotations

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


# -- The actors ------------------------------------------------------------------------------------


@record
class Action:
    """One atomic step of the broker or its environment. Every action derives from one actor below."""


    @property
    def thread(self) -> ThreadId | None:
        """The broker thread that takes this step; None for the environment's inputs and faults."""
        return None


@record
class IoThreadStep(Action):
    """A step of a remoting (Netty handler) thread."""

    io_thread: int

    @property
    def thread(self) -> ThreadId:
        return IoThreadId(self.io_thread)


@record
class WorkerStep(Action):
    """A step of an executor's worker thread."""

    executor: ExecutorName
    worker: int

    @property
    def thread(self) -> ThreadId:
        return WorkerId(self.executor, self.worker)


@record
class CommitServiceStep(Action):
    """A step of CommitRealTimeService."""


    @property
    def thread(self) -> ThreadId:
        return COMMIT_SERVICE


@record
class FastFailureStep(Action):
    """A step of the BrokerFastFailure scheduler thread."""


    @property
    def thread(self) -> ThreadId:
        return FAST_FAILURE


@record
class EnvironmentInput(Action):
    """Something outside the broker's threads: a request arrives, time passes, an operator changes a
    setting, broker code submits a task, the HA service takes the put lock."""



@record
class Fault(Action):
    """A fault the environment injects into a thread (an exception, a rejecting pool): not a step the
    thread chooses, so a driver feeds it like an input."""



#: Each actor's name, as the documents say it. (Not a class attribute: the compiled spec's records
#: would take an annotated attribute for a field.)
ACTOR_NAMES: dict[type[Action], str] = {
    IoThreadStep: "remoting thread",
    WorkerStep: "worker thread",
    CommitServiceStep: "commit service",
    FastFailureStep: "fast failure",
    EnvironmentInput: "environment",
    Fault: "environment (fault)",
}


def actor_of(cls: type[Action]) -> str:
    """The name of the actor whose step ``cls`` is."""
    return next(name for actor, name in ACTOR_NAMES.items() if issubclass(cls, actor))


def thread_of(a: Action) -> ThreadId | None:
    """The broker thread whose atomic step ``a`` is; None for an environment input or an injected fault."""
    return a.thread


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
