package org.apache.rocketmq.store;

import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;

/**
 * Stand-in for CommitLog (5.3.3): the put lock and beginTimeInLock. As in 5.x, beginTimeInLock
 * is reset on the normal path only: an exception inside the lock leaves it stuck.
 */
public class CommitLog {
    private final PutMessageLock putMessageLock = new PutMessageReentrantLock();
    private volatile long beginTimeInLock = 0;

    public long getBeginTimeInLock() {
        return beginTimeInLock;
    }

    public CompletableFuture<PutMessageStatus> asyncPutMessage(final MessageExtBrokerInner msg) {
        putMessageLock.lock();
        try {
            this.beginTimeInLock = System.currentTimeMillis();
            if (msg.isFailInsideLock()) {
                throw new IllegalStateException("planted: the append failed inside the put lock");
            }
            if (msg.getAppendMillis() > 0) {
                Thread.sleep(msg.getAppendMillis());
            }
            this.beginTimeInLock = 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            putMessageLock.unlock();
        }
        return CompletableFuture.completedFuture(PutMessageStatus.PUT_OK);
    }
}
