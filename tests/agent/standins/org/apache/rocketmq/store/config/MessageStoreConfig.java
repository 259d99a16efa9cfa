package org.apache.rocketmq.store.config;

/** Stand-in for MessageStoreConfig: the store settings of the trace header. */
public class MessageStoreConfig {
    private int mappedFileSizeCommitLog = 1024 * 1024 * 1024;
    private long osPageCacheBusyTimeOutMills = 1000;
    private boolean transientStorePoolEnable = false;
    private int transientStorePoolSize = 5;
    private FlushDiskType flushDiskType = FlushDiskType.ASYNC_FLUSH;

    public int getMappedFileSizeCommitLog() { return mappedFileSizeCommitLog; }
    public void setMappedFileSizeCommitLog(int v) { mappedFileSizeCommitLog = v; }
    public long getOsPageCacheBusyTimeOutMills() { return osPageCacheBusyTimeOutMills; }
    public void setOsPageCacheBusyTimeOutMills(long v) { osPageCacheBusyTimeOutMills = v; }
    public boolean isTransientStorePoolEnable() { return transientStorePoolEnable; }
    public int getTransientStorePoolSize() { return transientStorePoolSize; }
    public FlushDiskType getFlushDiskType() { return flushDiskType; }
}
