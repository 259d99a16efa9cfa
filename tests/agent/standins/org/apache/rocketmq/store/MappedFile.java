package org.apache.rocketmq.store;

/** Stand-in for MappedFile: a file of fileSize bytes that messages fill; no buffer, no disk. */
public class MappedFile {
    private final int fileSize;
    private int wrotePosition;

    public MappedFile(int fileSize) {
        this.fileSize = fileSize;
    }

    public boolean isFull() {
        return this.fileSize == this.wrotePosition;
    }

    public void appendMessage(int bytes) {
        this.wrotePosition += bytes;
    }
}
