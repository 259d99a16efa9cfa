package org.apache.rocketmq.store.config;

/** Stand-in for BrokerRole. */
public enum BrokerRole {
    ASYNC_MASTER,
    SYNC_MASTER,
    SLAVE
}
