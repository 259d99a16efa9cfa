package org.apache.rocketmq.store;

import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** Stand-in for DefaultMessageStore (5.3.3): the busy pre-check before the commit log's put. */
public class DefaultMessageStore {
    private final MessageStoreConfig messageStoreConfig;
    private final CommitLog commitLog;
    private final TransientStorePool transientStorePool;

    public DefaultMessageStore(MessageStoreConfig messageStoreConfig) {
        this.messageStoreConfig = messageStoreConfig;
        this.transientStorePool = messageStoreConfig.isTransientStorePoolEnable()
            ? new TransientStorePool(messageStoreConfig.getTransientStorePoolSize()) : null;
        this.commitLog = new CommitLog(messageStoreConfig.getMappedFileSizeCommitLog(), transientStorePool);
    }

    /** Starts CommitLog's CommitRealTimeService when the pool is enabled: a commit every commitIntervalCommitLog ms. */
    public void start() {
        if (transientStorePool == null) {
            return;
        }
        Thread commit = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(messageStoreConfig.getCommitIntervalCommitLog());
                } catch (InterruptedException e) {
                    return;
                }
                commitLog.getMappedFileQueue().commit();
            }
        }, "CommitRealTimeService");
        commit.setDaemon(true);
        commit.start();
    }

    public CompletableFuture<PutMessageStatus> asyncPutMessage(MessageExtBrokerInner msg) {
        if (this.isOSPageCacheBusy()) {
            return CompletableFuture.completedFuture(PutMessageStatus.OS_PAGE_CACHE_BUSY);
        }
        return this.commitLog.asyncPutMessage(msg);
    }

    public CommitLog getCommitLog() {
        return commitLog;
    }

    public boolean isOSPageCacheBusy() {
        long begin = this.commitLog.getBeginTimeInLock();
        long diff = System.currentTimeMillis() - begin;
        return diff < 10000000 && diff > this.messageStoreConfig.getOsPageCacheBusyTimeOutMills();
    }

    public int remainTransientStoreBufferNumbs() {
        if (this.messageStoreConfig.isTransientStorePoolEnable()) {
            return this.transientStorePool.availableBufferNums();
        }
        return Integer.MAX_VALUE;
    }

    public boolean isTransientStorePoolDeficient() {
        return remainTransientStoreBufferNumbs() == 0;
    }
}
