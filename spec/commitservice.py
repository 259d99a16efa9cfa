"""CommitRealTimeService: copies write buffers to the file channel and returns full files' buffers.

It runs only when the pool is enabled. Each call of ``MappedFileQueue.commit`` commits at most
one file, the one holding ``committedWhere`` (corner 37); crossing a file boundary takes one
more call. Within one ``commit()`` Java copies the bytes and, when the commit reached the file
size, returns the buffer; the spec splits those into two steps so that the short window where a
full file's buffer is not yet back (the pool looks one buffer poorer) is visible.

Source: S/CommitLog.java CommitRealTimeService.run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1465-L1504), S/MappedFileQueue.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java#L651-L662),
S/MappedFile.java (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L46-L597) / S/logfile/DefaultMappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/logfile/DefaultMappedFile.java#L412-L437).
"""

from __future__ import annotations


from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.state import NO_OUTPUTS, BrokerState, Next
from spec.storepool import commit_file, file_awaiting_return, file_to_commit, return_committed_buffer
from spec.actors import CommitServiceStep


@record
class CommitServiceCommits(CommitServiceStep):
    """CommitRealTimeService commits the oldest file with uncommitted bytes in its write buffer.

    Changes: files
    """


def commit_service_commits_enabled(config: BrokerConfig, s: BrokerState, a: CommitServiceCommits) -> bool:
    """Guard: the pool is enabled and a file has uncommitted bytes in its write buffer, with no
    buffer still due back.
    Source: S/MappedFileQueue.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java#L651-L662) → MappedFile.commit (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L315-L336): ``writeBuffer != null`` and
    ``committedPosition < wrotePosition``.
    """
    return config.pool_enabled and file_to_commit(s.files, config.mapped_file_size) is not None


def commit_service_commits(config: BrokerConfig, s: BrokerState, a: CommitServiceCommits) -> Next:
    """Effect: that file's committedPosition = wrotePosition.

    Source: S/MappedFile.java commit0 (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L338-L354) (4.x), S/logfile/DefaultMappedFile.java commit0 (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/logfile/DefaultMappedFile.java#L439-L455) (5.x).
    Simplification: see :func:`spec.storepool.commit_file` (cadence and least pages abstracted).
    """
    position = file_to_commit(s.files, config.mapped_file_size)
    assert position is not None
    return replace(s, files=commit_file(s.files, position)), NO_OUTPUTS


@record
class CommitServiceReturnsBuffer(CommitServiceStep):
    """A commit reached the file size: the file's buffer goes back to the head of the pool.

    Changes: files, available_buffers
    """


def commit_service_returns_buffer_enabled(
    config: BrokerConfig, s: BrokerState, a: CommitServiceReturnsBuffer
) -> bool:
    """Guard: a file's commit reached the file size and it still holds its buffer.

    Source: S/MappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L315-L336): ``committedPosition == fileSize`` with the write buffer still
    held.
    """
    return file_awaiting_return(s.files, config.mapped_file_size) is not None


def commit_service_returns_buffer(config: BrokerConfig, s: BrokerState, a: CommitServiceReturnsBuffer) -> Next:
    """Effect: ``transientStorePool.returnBuffer(writeBuffer)`` (to the deque head); writeBuffer = null.

    Source: S/MappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L315-L336) (4.x) / DefaultMappedFile.commit (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/logfile/DefaultMappedFile.java#L412-L437) (5.x): ``if (writeBuffer
    != null && transientStorePool != null && committedPosition == fileSize)``.
    """
    position = file_awaiting_return(s.files, config.mapped_file_size)
    assert position is not None
    files, available = return_committed_buffer(s.files, s.available_buffers, position)
    return replace(s, files=files, available_buffers=available), NO_OUTPUTS
