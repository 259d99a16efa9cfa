package org.apache.rocketmq.store;

import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;

/**
 * Stand-in for CommitLog: the put lock, beginTimeInLock and the files a put appends to. As in 5.x, beginTimeInLock is reset
 * on the normal path only, so an exception inside the lock leaves it stuck; 4.9.3-4.9.8 also
 * reset it in {@code finally}.
 *
 * <p>Planted bug for the tests: the system property {@code standin.planted.stuck_begin_time}
 * takes the {@code finally} reset out of 4.9.8, as 4.0.0-4.9.2 were.
 */
public class CommitLog {
    private static final boolean RESET_IN_FINALLY = MQVersion.STANDIN_4_9_8 && !Boolean.getBoolean("standin.planted.stuck_begin_time");
    /** The size of every message the stand-ins put (docs/agent.md, the option message_bytes). */
    public static final int MESSAGE_BYTES = 1024;
    private final PutMessageLock putMessageLock = new PutMessageReentrantLock();
    private volatile long beginTimeInLock = 0;
    private final MappedFileQueue mappedFileQueue;

    public CommitLog(int mappedFileSize, TransientStorePool transientStorePool) {
        this.mappedFileQueue = new MappedFileQueue(mappedFileSize, transientStorePool);
    }

    public MappedFileQueue getMappedFileQueue() {
        return mappedFileQueue;
    }

    public long getBeginTimeInLock() {
        return beginTimeInLock;
    }

    public PutMessageLock getPutMessageLock() {
        return putMessageLock;
    }

    public CompletableFuture<PutMessageStatus> asyncPutMessage(final MessageExtBrokerInner msg) {
        MappedFile mappedFile = this.mappedFileQueue.getLastMappedFile();
        putMessageLock.lock();
        try {
            this.beginTimeInLock = System.currentTimeMillis();
            if (null == mappedFile || mappedFile.isFull()) {
                mappedFile = this.mappedFileQueue.getLastMappedFile(0);
            }
            if (msg.isFailInsideLock()) {
                throw new IllegalStateException("planted: the append failed inside the put lock");
            }
            if (msg.getAppendMillis() > 0) {
                Thread.sleep(msg.getAppendMillis());
            }
            mappedFile.appendMessage(MESSAGE_BYTES);
            this.beginTimeInLock = 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            if (RESET_IN_FINALLY) {
                this.beginTimeInLock = 0;
            }
            putMessageLock.unlock();
        }
        return CompletableFuture.completedFuture(PutMessageStatus.PUT_OK);
    }
}
