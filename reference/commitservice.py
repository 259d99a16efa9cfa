"""CommitRealTimeService: copies what puts wrote into pool buffers to the file channel, and returns a
buffer to the pool once its file is committed to the end.

The cadence and commitCommitLogLeastPages are left out: it commits whenever there is something to
commit. The copy and the return are two steps (in Java, one commit() call).

Sources: S/CommitLog.java CommitRealTimeService.run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1465-L1504), S/MappedFileQueue.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java#L651-L662),
S/MappedFile.java commit (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L315-L336) (corner 33).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.store import MappedFile
from reference.threads import ThreadBody
from spec.commitservice import CommitServiceCommits, CommitServiceReturnsBuffer

if TYPE_CHECKING:
    from reference.broker import Broker


class CommitRealTimeService:
    """The service thread; it exists only when the pool is enabled."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.body = self._run()

    def file_to_commit(self) -> MappedFile | None:
        """MappedFileQueue.commit commits the one file holding ``committedWhere``: the oldest file
        with uncommitted bytes in a write buffer (files without one never advance committedPosition)."""
        for f in self.broker.message_store.commit_log.mapped_file_queue.mapped_files:
            if f.write_buffer is not None and f.committed_position < f.wrote_position:
                return f
        return None

    def buffer_due_back(self, file: MappedFile) -> bool:
        """MappedFile.commit's only return path: ``committedPosition == fileSize`` (corner 33)."""
        return file.committed_position == self.broker.config.mapped_file_size

    def _run(self) -> ThreadBody:
        """run(): commit, and when that filled the file, return its buffer."""
        store = self.broker.message_store
        while True:
            file = self.file_to_commit()
            if file is None:
                yield None
                continue
            file.commit0()
            yield CommitServiceCommits()
            if self.buffer_due_back(file):
                buffer = file.write_buffer
                assert buffer is not None
                store.transient_store_pool.return_buffer(buffer)
                file.write_buffer = None
                queue = store.commit_log.mapped_file_queue
                if file is not queue.get_last_mapped_file():
                    queue.delete(file)
                yield CommitServiceReturnsBuffer()
