"""Remoting and executor data structures: commands, RequestTask, processors, thread pools.

Mutable, as in Java: a RequestTask's ``stop_run`` is flipped by fast failure after removal; a
queue is a ``collections.deque`` with a separate capacity (``deque(maxlen=...)`` would silently
drop the head on a full offer, which is not what a LinkedBlockingQueue does).

Sources: R/protocol/RemotingCommand.java, R/netty/RequestTask.java, FutureTaskExt,
BrokerFixedThreadPoolExecutor / FutureTaskExtThreadPoolExecutor, B/BrokerController.java
registerProcessor (semantics.md 1.1–1.4).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from dataclasses import dataclass

from spec.actors import Action
from spec.codes import PUT_CODES, RequestCode
from reference.store import Holder
from spec.profiles import ExecutorName, Profile

ThreadBody = Generator[Action | None, None, None]
"""A thread's run loop: each ``next()`` performs one atomic step and yields its action, or None
when the thread cannot move (blocked in ``take()``, waiting for the lock, run not due)."""


@dataclass(frozen=True)
class RemotingCommand:
    """A decoded request command (only the fields the broker's overload path reads)."""

    opaque: int  # the id its response echoes
    code: RequestCode
    topic: str  # the send header's topic; "" if the request has none
    oneway: bool  # isOnewayRPC()


class RequestTask:
    """``RequestTask implements Runnable``: the command, its creation time, and ``stopRun``."""

    def __init__(self, command: RemotingCommand, create_timestamp: int) -> None:
        self.command = command
        self.create_timestamp = create_timestamp  # System.currentTimeMillis() in the constructor
        self.stop_run = False  # volatile; set by BrokerFastFailure after it removed the task


class FutureTaskExt:
    """The ``FutureTask`` subclass the broker's executors wrap each submitted Runnable in."""

    def __init__(self, runnable: RequestTask) -> None:
        self.runnable = runnable


class InternalTask:
    """A queue element that is not a RequestTask in a FutureTaskExt (a plain FutureTask of broker code)."""

    def __init__(self, task_id: int) -> None:
        self.task_id = task_id

    def run(self) -> None:
        """What broker code submitted; nothing the overload path can see."""


QueueItem = FutureTaskExt | InternalTask


def cast_runnable(item: QueueItem) -> RequestTask | None:
    """``BrokerFastFailure.castRunnable``: the RequestTask inside a FutureTaskExt, else null."""
    return item.runnable if isinstance(item, FutureTaskExt) else None


class Processor:
    """A NettyRequestProcessor registered in the processor table."""

    def __init__(self, name: str, writes_commit_log: bool, known_codes: frozenset[RequestCode] | None) -> None:
        self.name = name
        self.writes_commit_log = writes_commit_log  # SendMessageProcessor: its requests take the put path
        # Codes its processRequest switch answers; None = every code it is registered for.
        self.known_codes = known_codes

    def knows(self, code: RequestCode) -> bool:
        return self.known_codes is None or code in self.known_codes


SEND_MESSAGE_PROCESSOR = Processor("SendMessageProcessor", writes_commit_log=True, known_codes=None)
SERVING_PROCESSOR = Processor("a processor that answers without the commit log", writes_commit_log=False, known_codes=None)
ADMIN_BROKER_PROCESSOR = Processor(
    "AdminBrokerProcessor", writes_commit_log=False, known_codes=frozenset({RequestCode.GET_BROKER_RUNTIME_INFO})
)


def processor_table(profile: Profile) -> dict[RequestCode, tuple[Processor, ExecutorName]]:
    """``BrokerController.registerProcessor``: code → (processor, executor) for the profile."""
    table: dict[RequestCode, tuple[Processor, ExecutorName]] = {}
    for code, executor in profile.executor_of_code:
        processor = SEND_MESSAGE_PROCESSOR if code in PUT_CODES else SERVING_PROCESSOR
        table[code] = (processor, executor)
    return table


class IoThreadContext:
    """One Netty handler thread and the request it is running processRequestCommand on."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.command: RemotingCommand | None = None  # the request being handled; None = waiting
        self.passed_limiter = False  # the rate-limit handler fired the request on to the dispatcher
        self.task: RequestTask | None = None  # built by processRequestCommand, not yet submitted
        self.limiter_pool_rejects = False  # injected: the limiter's own executor rejects the next task

    def finish(self) -> None:
        """Back to reading the next request."""
        self.command = None
        self.passed_limiter = False
        self.task = None


class WorkerThread:
    """A thread of a fixed pool, and where it is in running its current RequestTask."""

    def __init__(self, executor: ExecutorName, index: int) -> None:
        self.executor = executor
        self.index = index
        self.task: RequestTask | None = None  # the task being run; None = blocked in take()
        self.passed_put_check = False  # the send's busy pre-check passed; the lock is next
        self.in_put_lock = False  # inside CommitLog's put critical section

    @property
    def holder(self) -> Holder:
        """The thread's identity as a put-lock holder."""
        return (self.executor.value, self.index)

    def finish(self) -> None:
        """Back to ``getTask()``."""
        self.task = None
        self.passed_put_check = False
        self.in_put_lock = False


class FixedThreadPoolExecutor:
    """A BrokerFixedThreadPoolExecutor: core = max = ``threads``; a queue of ``capacity`` (None = unbounded)."""

    def __init__(self, name: ExecutorName, threads: int, capacity: int | None) -> None:
        self.name = name
        self.core_pool_size = threads
        self.capacity = capacity
        self.queue: deque[QueueItem] = deque()  # the LinkedBlockingQueue; index 0 is the head
        self.workers: list[WorkerThread] = []  # threads started so far; they never retire
