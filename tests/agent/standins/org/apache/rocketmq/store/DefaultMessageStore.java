package org.apache.rocketmq.store;

import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** Stand-in for DefaultMessageStore (5.3.3): the busy pre-check before the commit log's put. */
public class DefaultMessageStore {
    private final MessageStoreConfig messageStoreConfig;
    private final CommitLog commitLog;

    public DefaultMessageStore(MessageStoreConfig messageStoreConfig) {
        this.messageStoreConfig = messageStoreConfig;
        this.commitLog = new CommitLog(messageStoreConfig.getMappedFileSizeCommitLog());
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

    public boolean isTransientStorePoolDeficient() {
        return false; // the stand-ins run without the TransientStorePool
    }
}
