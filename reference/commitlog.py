"""CommitLog's put path: the put lock, ``beginTimeInLock``, and the mapped files a put appends to.

The critical section takes the lock (spinning or parked, invisible to the busy check: corner 3),
stamps ``beginTimeInLock``, creates a new last file when there is none or it is full (borrowing a
pool buffer when the pool is on), appends, and resets ``beginTimeInLock`` at the normal end,
inside the ``try``; ``finally`` only unlocks, except in 4.9.3–4.9.8 where it also resets, so an
exception inside the lock leaves the stamp behind everywhere else (the stuck busy).

Sources: S/CommitLog.java asyncPutMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098), S/MappedFileQueue.java getLastMappedFile (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java#L299-L316),
S/AllocateMappedFileService.java mmapOperation (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/AllocateMappedFileService.java#L145-L147), S/MappedFile.java init (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L155-L160).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.executor import WorkerThread
from reference.store import MappedFile, MappedFileQueue, PutMessageLock, PutMessageReentrantLock, PutMessageSpinLock
from reference.threads import ThreadBody
from spec.profiles import PutLockKind
from spec.workers import WorkerAcquiresPutLock, WorkerCreatesMappedFile

if TYPE_CHECKING:
    from reference.broker import Broker


class CommitLog:
    """The put lock of the profile's kind, ``beginTimeInLock`` (0 = no writer inside), the files."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.put_message_lock: PutMessageLock = (
            PutMessageReentrantLock() if broker.profile.put_lock is PutLockKind.REENTRANT else PutMessageSpinLock()
        )
        self.begin_time_in_lock = 0
        self.mapped_file_queue = MappedFileQueue()

    def reset_begin_time_on_exception(self) -> bool:
        """Whether the ``finally`` resets beginTimeInLock (4.9.3–4.9.8 only, fix c6aeb782e5)."""
        return self.broker.profile.begin_time_reset_in_finally

    def put_message(self, worker: WorkerThread) -> ThreadBody:
        """asyncPutMessage's critical section: lock, stamp, get a file, append, reset, unlock."""
        executor, index = worker.executor, worker.index
        while not self.put_message_lock.try_lock(worker.holder):
            yield None  # spinning or parked: invisible to isOSPageCacheBusy (corner 3)
        try:
            self.begin_time_in_lock = self.broker.now
            worker.in_put_lock = True
            yield WorkerAcquiresPutLock(executor, index)
            last = self.mapped_file_queue.get_last_mapped_file()
            if last is None or last.is_full(self.broker.config.mapped_file_size):
                self.create_mapped_file()
                yield WorkerCreatesMappedFile(executor, index)
            current = self.mapped_file_queue.get_last_mapped_file()
            assert current is not None
            current.append_message()
            self.begin_time_in_lock = 0
        finally:
            worker.in_put_lock = False
            if self.reset_begin_time_on_exception():
                self.begin_time_in_lock = 0
            self.put_message_lock.unlock(worker.holder)

    def create_mapped_file(self) -> None:
        """``getLastMappedFile(0)`` → mmapOperation → ``MappedFile.init(..., pool)``, which borrows a
        buffer when the pool is enabled (null when none is left: writes go to the mmap).

        A file without a buffer has nothing for the commit service (and is full: a new file is only
        created when the last one is), so it leaves the queue here.
        """
        queue = self.mapped_file_queue
        index = queue.next_file_index()
        buffer = self.broker.message_store.transient_store_pool.borrow_buffer() if self.broker.config.pool_enabled else None
        for finished in [f for f in queue.mapped_files if f.write_buffer is None]:
            queue.delete(finished)
        queue.mapped_files.append(MappedFile(index, buffer))
