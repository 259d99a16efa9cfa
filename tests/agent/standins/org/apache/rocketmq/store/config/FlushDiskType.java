package org.apache.rocketmq.store.config;

/** Stand-in for FlushDiskType. */
public enum FlushDiskType {
    SYNC_FLUSH,
    ASYNC_FLUSH
}
