"""The TransientStorePool, the mapped files that borrow its buffers, and the commit that returns them.

With ``transientStorePoolEnable`` a new commit-log file borrows a direct buffer from the pool's
deque head; appends go to that buffer; CommitRealTimeService copies it to the file channel; and
the buffer goes back to the deque head only when a commit reaches the file size. Borrowing from
an empty pool returns null and the file writes to its mmap instead. ``rejectRequest`` refuses
every send while exactly zero buffers are available (issue #2439: with a pool of one, the
first file's borrow makes the broker refuse all sends, so the file can never fill and the
buffer never returns).

Source: S/TransientStorePool.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L30-L92) (all versions), S/MappedFile.java init (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L155-L160)/commit (4.x),
S/logfile/DefaultMappedFile.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/logfile/DefaultMappedFile.java#L61-L946) (5.x), S/CommitLog.java CommitRealTimeService (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1452-L1505).
"""

from __future__ import annotations

from spec.state import MappedFile

INTEGER_MAX_VALUE = 2**31 - 1


def buffers_partition_the_pool(available: tuple[int, ...], files: tuple[MappedFile, ...], pool_size: int) -> bool:
    """Every buffer id 0..pool_size-1 is either available or lent to exactly one file, never both."""
    lent = [f.write_buffer for f in files if f.write_buffer is not None]
    everything = list(available) + lent
    return len(everything) == len(set(everything)) and set(everything) == set(range(pool_size))


def remain_transient_store_buffer_nums(available: tuple[int, ...], pool_enabled: bool) -> int:
    """``remainTransientStoreBufferNumbs()``: the available count, or Integer.MAX_VALUE when disabled.

    Source: S/TransientStorePool.java remainBufferNumbs (https://github.com/apache/rocketmq/blob/rocketmq-all-4.5.1/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L83-L88) (4.0.0–4.5.1), availableBufferNums
    (4.5.2–5.0.0); S/DefaultMessageStore.java remainTransientStoreBufferNumbs (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L2033-L2038) (5.1.4+).

    post: (not pool_enabled) or __return__ == len(available)
    """
    return len(available) if pool_enabled else INTEGER_MAX_VALUE


def is_transient_store_pool_deficient(available: tuple[int, ...], pool_enabled: bool) -> bool:
    """``isTransientStorePoolDeficient()``: ``remainTransientStoreBufferNumbs() == 0`` (every version).

    post: __return__ == (pool_enabled and len(available) == 0)
    """
    return remain_transient_store_buffer_nums(available, pool_enabled) == 0


def borrow_buffer(available: tuple[int, ...]) -> tuple[int | None, tuple[int, ...]]:
    """``borrowBuffer()``: ``pollFirst`` from the head; null (never blocking) when empty.

    The low-water warning (``size after poll < poolSize × 0.4``) is a log line only (corner 31).
    Source: S/TransientStorePool.java borrowBuffer (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L73-L79).

    post: (len(available) == 0) == (__return__[0] is None)
    post: len(available) == 0 or (__return__[0] == available[0] and __return__[1] == available[1:])
    """
    if not available:
        return None, available
    return available[0], available[1:]


def return_buffer(available: tuple[int, ...], buffer: int) -> tuple[int, ...]:
    """``returnBuffer(bb)``: reset position/limit, ``offerFirst``: so reuse is LIFO (corner 32).

    There is no duplicate check in Java; the spec's callers only return a lent buffer.
    Source: S/TransientStorePool.java returnBuffer (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L67-L71).

    pre: buffer not in available
    post: __return__[0] == buffer and __return__[1:] == available
    """
    return (buffer,) + available


def current_file_has_room(files: tuple[MappedFile, ...], file_size: int) -> bool:
    """Whether the last file can take one more message (else the put path needs a new file)."""
    return bool(files) and files[-1].wrote < file_size


def create_mapped_file(
    files: tuple[MappedFile, ...], available: tuple[int, ...], pool_enabled: bool, file_size: int
) -> tuple[tuple[MappedFile, ...], tuple[int, ...]]:
    """The put path gets a new last file: ``MappedFile.init`` borrows a buffer if the pool is enabled.

    Source: S/AllocateMappedFileService.mmapOperation → MappedFile.init(path, size, pool)
    (4.x) / DefaultMappedFile.init (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/logfile/DefaultMappedFile.java#L150-L155) (5.x): ``writeBuffer = pool.borrowBuffer()``.
    Simplification: the file is created synchronously in the put path; the allocate service's
    pre-allocation of the next-next file (which borrows a second buffer ahead of time) is left
    out, as is ``fastFailIfNoBufferInStorePool`` (off by default; corner 36).
    Spec bookkeeping: full files with no buffer have nothing left to commit or return and are
    retired here.

    pre: not current_file_has_room(files, file_size)
    post: len(__return__[0]) >= 1 and __return__[0][-1].wrote == 0
    """
    kept = tuple(f for f in files if f.write_buffer is not None)
    index = files[-1].index + 1 if files else 0
    buffer: int | None = None
    if pool_enabled:
        buffer, available = borrow_buffer(available)
    return kept + (MappedFile(index=index, wrote=0, committed=0, write_buffer=buffer),), available


def append_message(files: tuple[MappedFile, ...], file_size: int) -> tuple[MappedFile, ...]:
    """``appendMessage``: one message into the write buffer (or the mmap when there is none).

    pre: current_file_has_room(files, file_size)
    post: __return__[-1].wrote == files[-1].wrote + 1
    """
    last = files[-1]
    return files[:-1] + (MappedFile(last.index, last.wrote + 1, last.committed, last.write_buffer),)


def file_to_commit(files: tuple[MappedFile, ...], file_size: int) -> int | None:
    """Position in ``files`` of the file the commit service would commit next, or None.

    MappedFileQueue.commit commits only the file holding ``committedWhere``: the oldest file
    with uncommitted bytes in a write buffer. A file whose buffer is due back blocks the next
    commit, because Java returns it within the same commit() call.
    """
    if file_awaiting_return(files, file_size) is not None:
        return None
    for i, f in enumerate(files):
        if f.write_buffer is not None and f.committed < f.wrote:
            return i
    return None


def commit_file(files: tuple[MappedFile, ...], position: int) -> tuple[MappedFile, ...]:
    """``commit0``: copy [committed, wrote) from the write buffer to the channel; committed = wrote.

    Source: S/MappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L315-L336)/commit0 (4.x), DefaultMappedFile (5.x).
    Simplification: ``isAbleToCommit(leastPages)`` and the 200 ms cadence are abstracted: the
    commit service may commit whenever there is something to commit (an over-approximation that
    contains every real cadence).

    pre: 0 <= position < len(files)
    post: __return__[position].committed == files[position].wrote
    """
    f = files[position]
    return files[:position] + (MappedFile(f.index, f.wrote, f.wrote, f.write_buffer),) + files[position + 1 :]


def file_awaiting_return(files: tuple[MappedFile, ...], file_size: int) -> int | None:
    """Position of a file whose commit reached the file size but whose buffer is not back yet."""
    for i, f in enumerate(files):
        if f.write_buffer is not None and f.committed == file_size:
            return i
    return None


def return_committed_buffer(
    files: tuple[MappedFile, ...], available: tuple[int, ...], position: int
) -> tuple[tuple[MappedFile, ...], tuple[int, ...]]:
    """The only return path: ``committedPosition == fileSize`` → ``returnBuffer``; writeBuffer = null.

    Source: S/MappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L315-L336) (4.x), S/logfile/DefaultMappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/logfile/DefaultMappedFile.java#L412-L437) (5.x):
    cleanup and destroy never return the buffer (corner 33). Spec bookkeeping: the file, fully
    committed and without a buffer, is retired, unless it is the last file, which stays (as
    ``getLastMappedFile``'s answer) so that the next file is numbered after it.

    pre: 0 <= position < len(files)
    pre: files[position].write_buffer is not None
    pre: files[position].write_buffer not in available
    pre: [f.write_buffer for f in files].count(files[position].write_buffer) == 1
    post: __return__[1][0] == files[position].write_buffer
    post: all(f.write_buffer != files[position].write_buffer for f in __return__[0])
    post: __return__[0][-1].index == files[-1].index
    """
    f = files[position]
    assert f.write_buffer is not None
    if position == len(files) - 1:
        kept = files[:position] + (MappedFile(f.index, f.wrote, f.committed, None),)
    else:
        kept = files[:position] + files[position + 1 :]
    return kept, return_buffer(available, f.write_buffer)
