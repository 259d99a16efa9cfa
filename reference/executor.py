"""BrokerFixedThreadPoolExecutor: core = max threads, a bounded FIFO queue, and its worker threads.

``execute`` is ThreadPoolExecutor's: a new core thread takes the task while fewer than core threads
exist, else the queue takes it if it has room, else the pool rejects it (AbortPolicy). Core equals
max, so no non-core thread is ever added (corner 9). A worker runs the task in hand, then takes
the queue's head for ever; a plain FutureTask of broker code runs without a RequestTask, and a
cancelled RequestTask does nothing (corner 26).

A queue is a ``collections.deque`` with a separate capacity (``deque(maxlen=...)`` would silently
drop the head on a full offer, which is not what a LinkedBlockingQueue does).

Sources: ThreadPoolExecutor.execute/addWorker/runWorker/getTask (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html), LinkedBlockingQueue.offer
(https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/LinkedBlockingQueue.html),
BrokerFixedThreadPoolExecutor / FutureTaskExtThreadPoolExecutor.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from reference.requests import FutureTaskExt, InternalTask, QueueItem, RequestTask, cast_runnable
from reference.store import Holder
from reference.threads import ThreadBody
from spec.actors import Action
from spec.profiles import ExecutorName
from spec.workers import WorkerDiscardsCancelledTask, WorkerRunsForeignTask, WorkerTakesTask


class RejectedExecutionError(Exception):
    """AbortPolicy: the pool has all its threads and its queue is full."""


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


RunTask = Callable[[WorkerThread, RequestTask], ThreadBody]
"""What a worker does with a RequestTask: the closure processRequestCommand built for it."""


class BrokerFixedThreadPoolExecutor:
    """One executor: ``threads`` core (= max) threads and a queue of ``capacity`` (None = unbounded)."""

    def __init__(self, name: ExecutorName, threads: int, capacity: int | None, run_task: RunTask) -> None:
        self.name = name
        self.core_pool_size = threads
        self.capacity = capacity
        self.queue: deque[QueueItem] = deque()  # the LinkedBlockingQueue; index 0 is the head
        self.workers: list[WorkerThread] = []  # threads started so far; they never retire
        self.bodies: list[ThreadBody] = []  # each started worker's run loop
        self.run_task = run_task

    def should_start_worker(self) -> bool:
        """execute's first branch: ``workerCountOf(c) < corePoolSize``."""
        return len(self.workers) < self.core_pool_size

    def queue_has_room(self) -> bool:
        """``LinkedBlockingQueue.offer`` succeeds: ``count < capacity``."""
        return self.capacity is None or len(self.queue) < self.capacity

    def execute(self, future: FutureTaskExt) -> bool:
        """Run ``future`` on a new core thread (True) or queue it (False); raise when both are impossible."""
        if self.should_start_worker():
            self._add_worker(future)
            return True
        if self.queue_has_room():
            self.queue.append(future)
            return False
        raise RejectedExecutionError(f"{self.name.value} queue full")

    def _add_worker(self, first_task: FutureTaskExt) -> None:
        """``addWorker(firstTask, true)``: the new thread starts with the task in hand."""
        worker = WorkerThread(self.name, len(self.workers))
        worker.task = first_task.runnable
        self.workers.append(worker)
        self.bodies.append(self._run_worker(worker))

    def _run_worker(self, worker: WorkerThread) -> ThreadBody:
        """ThreadPoolExecutor.runWorker: run the task in hand, then ``getTask()`` (``take()``) forever."""
        while True:
            task = worker.task
            if task is None:
                yield None if not self.queue else self.get_task(worker)
            else:
                yield from self.run_task(worker, task)

    def task_should_run(self, task: RequestTask) -> bool:
        """``RequestTask.run``: ``if (!stopRun) runnable.run()`` (corner 26)."""
        return not task.stop_run

    def get_task(self, worker: WorkerThread) -> Action:
        """``queue.take()`` and the start of ``FutureTaskExt.run``: a cancelled RequestTask does nothing."""
        item = self.queue.popleft()
        task = cast_runnable(item)
        if task is None:
            assert isinstance(item, InternalTask)
            item.run()
            return WorkerRunsForeignTask(self.name, worker.index)
        if not self.task_should_run(task):
            return WorkerDiscardsCancelledTask(self.name, worker.index)
        worker.task = task
        return WorkerTakesTask(self.name, worker.index)
