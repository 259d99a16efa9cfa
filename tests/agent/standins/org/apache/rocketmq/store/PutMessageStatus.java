package org.apache.rocketmq.store;

/** Stand-in for PutMessageStatus: the two outcomes the stand-ins produce. */
public enum PutMessageStatus {
    PUT_OK,
    OS_PAGE_CACHE_BUSY,
}
