package org.apache.rocketmq.store.config;

/** Stand-in for MessageStoreConfig: the store settings of the trace header. */
public class MessageStoreConfig {
    private int mappedFileSizeCommitLog = 1024 * 1024 * 1024;
    private long osPageCacheBusyTimeOutMills = 1000;
    private boolean transientStorePoolEnable = false;
    private int transientStorePoolSize = 5;
    private FlushDiskType flushDiskType = FlushDiskType.ASYNC_FLUSH;
    private BrokerRole brokerRole = BrokerRole.ASYNC_MASTER;

    public int getMappedFileSizeCommitLog() { return mappedFileSizeCommitLog; }
    public void setMappedFileSizeCommitLog(int v) { mappedFileSizeCommitLog = v; }
    public long getOsPageCacheBusyTimeOutMills() { return osPageCacheBusyTimeOutMills; }
    public void setOsPageCacheBusyTimeOutMills(long v) { osPageCacheBusyTimeOutMills = v; }
    private int commitIntervalCommitLog = 200;

    public boolean isTransientStorePoolEnable() { return transientStorePoolEnable; }
    public void setTransientStorePoolEnable(boolean v) { transientStorePoolEnable = v; }
    public int getTransientStorePoolSize() { return transientStorePoolSize; }
    public void setTransientStorePoolSize(int v) { transientStorePoolSize = v; }
    public int getCommitIntervalCommitLog() { return commitIntervalCommitLog; }
    public void setCommitIntervalCommitLog(int v) { commitIntervalCommitLog = v; }
    public FlushDiskType getFlushDiskType() { return flushDiskType; }
    public BrokerRole getBrokerRole() { return brokerRole; }
    public void setBrokerRole(BrokerRole v) { brokerRole = v; }
}
