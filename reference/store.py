"""The store's data structures: the two put locks, mapped files, and the TransientStorePool.

These hold state and do what their Java namesakes do; the decisions that tie them together
(when the store is busy, when a buffer is due back) belong to :mod:`reference.messagestore`,
:mod:`reference.commitlog` and :mod:`reference.commitservice`.

Sources: S/PutMessageSpinLock.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/PutMessageSpinLock.java#L24-L41), S/PutMessageReentrantLock.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/PutMessageReentrantLock.java#L24-L36), S/MappedFile.java (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L46-L597),
S/MappedFileQueue.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java#L40-L917), S/TransientStorePool.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L30-L92).
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

Holder = tuple[str, int]
"""The thread inside the put lock: (executor name, worker index), or the HA service's id."""


class IllegalMonitorStateError(RuntimeError):
    """``ReentrantLock.unlock`` by a thread that does not hold the lock."""


class PutMessageLock(Protocol):
    """``S/PutMessageLock.java``: ``lock()`` / ``unlock()``; ``try_lock`` is one attempt of ``lock()``."""

    @property
    def holder(self) -> Holder | None:
        """The thread inside the critical section, None if free."""
        ...

    def try_lock(self, thread: Holder) -> bool:
        """One attempt to take the lock; False means the caller must keep trying (spin or park)."""
        ...

    def unlock(self, thread: Holder) -> None:
        """Release the lock held by ``thread``."""
        ...


class PutMessageSpinLock:
    """An ``AtomicBoolean putMessageSpinLock = new AtomicBoolean(true)``: true means free.

    ``lock()`` loops on ``compareAndSet(true, false)``; ``unlock()`` is ``compareAndSet(false, true)``,
    a silent no-op on a free lock. Neither reentrant nor fair. Java keeps no owner; ``_owner``
    is kept only so that the broker can be observed.
    """

    def __init__(self) -> None:
        self._free = True
        self._owner: Holder | None = None

    @property
    def holder(self) -> Holder | None:
        return self._owner

    def _compare_and_set(self, expect: bool, update: bool) -> bool:
        if self._free is not expect:
            return False
        self._free = update
        return True

    def try_lock(self, thread: Holder) -> bool:
        if not self._compare_and_set(True, False):
            return False
        self._owner = thread
        return True

    def unlock(self, thread: Holder) -> None:
        if self._compare_and_set(False, True):
            self._owner = None


class PutMessageReentrantLock:
    """A non-fair ``ReentrantLock``: an owner and a hold count."""

    def __init__(self) -> None:
        self._owner: Holder | None = None
        self._holds = 0

    @property
    def holder(self) -> Holder | None:
        return self._owner

    def try_lock(self, thread: Holder) -> bool:
        if self._owner is None:
            self._owner = thread
        elif self._owner != thread:
            return False
        self._holds += 1
        return True

    def unlock(self, thread: Holder) -> None:
        if self._owner != thread:
            raise IllegalMonitorStateError(f"{thread} unlocks a put lock held by {self._owner}")
        self._holds -= 1
        if self._holds == 0:
            self._owner = None


class MappedFile:
    """A commit-log file: positions counted in messages, and the pool buffer it borrowed, if any."""

    def __init__(self, index: int, write_buffer: int | None) -> None:
        self.index = index  # the file's place in the commit log (file name order)
        self.wrote_position = 0  # wrotePosition
        self.committed_position = 0  # committedPosition: moves only when there is a write buffer
        self.write_buffer = write_buffer  # writeBuffer: a pool buffer id; None = appends go to the mmap

    def is_full(self, file_size: int) -> bool:
        return self.wrote_position >= file_size

    def append_message(self) -> None:
        """``appendMessage``: one message into ``writeBuffer.slice()`` or ``mappedByteBuffer.slice()``."""
        self.wrote_position += 1

    def commit0(self) -> None:
        """Copy [committed, wrote) from the write buffer to the file channel."""
        self.committed_position = self.wrote_position


class MappedFileQueue:
    """The commit log's files, oldest first.

    A file leaves the queue once the pool has nothing more to do with it: when its buffer goes
    back (unless it is still the last file), or (having none) when a newer file is created. The broker deletes files only when
    CleanCommitLogService expires them; deleting them at these points keeps the observable
    commit log to the files that still matter to the pool, as the spec's state does.
    """

    def __init__(self) -> None:
        self.mapped_files: list[MappedFile] = []

    def get_last_mapped_file(self) -> MappedFile | None:
        return self.mapped_files[-1] if self.mapped_files else None

    def next_file_index(self) -> int:
        """``getLastMappedFile(startOffset)``: one after the last file, or the start offset (0) when empty."""
        last = self.get_last_mapped_file()
        return 0 if last is None else last.index + 1

    def delete(self, file: MappedFile) -> None:
        self.mapped_files.remove(file)


class TransientStorePool:
    """``availableBuffers``, a ``ConcurrentLinkedDeque``: buffer ids, index 0 is the head."""

    def __init__(self, pool_size: int) -> None:
        self.pool_size = pool_size
        self.available_buffers: deque[int] = deque()

    def init(self) -> None:
        """``init()``: allocate ``poolSize`` buffers and ``offer`` each, which appends at the tail."""
        for buffer in range(self.pool_size):
            self.available_buffers.append(buffer)

    def available_buffer_nums(self) -> int:
        return len(self.available_buffers)

    def borrow_buffer(self) -> int | None:
        """``borrowBuffer``: ``pollFirst`` (null, never blocking, when empty)."""
        return self.available_buffers.popleft() if self.available_buffers else None

    def return_buffer(self, buffer: int) -> None:
        """``returnBuffer``: ``offerFirst``, so reuse is LIFO (corner 32)."""
        self.available_buffers.appendleft(buffer)
