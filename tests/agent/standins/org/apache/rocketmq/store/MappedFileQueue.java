package org.apache.rocketmq.store;

/**
 * Stand-in for MappedFileQueue: the commit log's files; {@code getLastMappedFile(startOffset)}
 * creates the next file when there is none or the last is full.
 */
public class MappedFileQueue {
    private final int mappedFileSize;
    private MappedFile last;

    public MappedFileQueue(int mappedFileSize) {
        this.mappedFileSize = mappedFileSize;
    }

    public MappedFile getLastMappedFile() {
        return last;
    }

    public MappedFile getLastMappedFile(final long startOffset) {
        if (last == null || last.isFull()) {
            last = new MappedFile(mappedFileSize);
        }
        return last;
    }
}
