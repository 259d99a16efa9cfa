package org.apache.rocketmq.store;

/**
 * Stand-in for MappedFile: a file of fileSize bytes that messages fill, into the pool buffer it
 * borrowed when the pool is enabled; commit() moves the committed position up to the written one
 * and, once the whole file is committed, gives the buffer back.
 */
public class MappedFile {
    private final int fileSize;
    private final TransientStorePool transientStorePool;
    private Integer writeBuffer;
    private int wrotePosition;
    private int committedPosition;

    public MappedFile(int fileSize, TransientStorePool transientStorePool) {
        this.fileSize = fileSize;
        this.transientStorePool = transientStorePool;
        this.writeBuffer = transientStorePool == null ? null : transientStorePool.borrowBuffer();
    }

    public synchronized boolean isFull() {
        return this.fileSize == this.wrotePosition;
    }

    public synchronized void appendMessage(int bytes) {
        this.wrotePosition += bytes;
    }

    /** Moves the write buffer's bytes to the file: committedPosition = wrotePosition. */
    protected void commit0() {
        this.committedPosition = this.wrotePosition;
    }

    /** Whether this file has bytes in its write buffer that are not committed. */
    public synchronized boolean hasUncommitted() {
        return writeBuffer != null && committedPosition < wrotePosition;
    }

    public synchronized void commit() {
        if (writeBuffer == null) {
            return;
        }
        commit0();
        if (this.committedPosition == this.fileSize) {
            this.transientStorePool.returnBuffer(writeBuffer);
            this.writeBuffer = null;
        }
    }
}
