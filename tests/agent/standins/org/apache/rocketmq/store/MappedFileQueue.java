package org.apache.rocketmq.store;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Stand-in for MappedFileQueue: the commit log's files; {@code getLastMappedFile(startOffset)}
 * creates the next file when there is none or the last is full; {@code commit()} commits the
 * oldest file with uncommitted bytes in its buffer.
 */
public class MappedFileQueue {
    private final int mappedFileSize;
    private final TransientStorePool transientStorePool;
    private final List<MappedFile> mappedFiles = new CopyOnWriteArrayList<>();

    public MappedFileQueue(int mappedFileSize, TransientStorePool transientStorePool) {
        this.mappedFileSize = mappedFileSize;
        this.transientStorePool = transientStorePool;
    }

    public MappedFile getLastMappedFile() {
        return mappedFiles.isEmpty() ? null : mappedFiles.get(mappedFiles.size() - 1);
    }

    public MappedFile getLastMappedFile(final long startOffset) {
        MappedFile last = getLastMappedFile();
        if (last == null || last.isFull()) {
            last = new MappedFile(mappedFileSize, transientStorePool);
            mappedFiles.add(last);
        }
        return last;
    }

    public void commit() {
        for (MappedFile f : mappedFiles) {
            if (f.hasUncommitted()) {
                f.commit();
                return;
            }
        }
    }
}
