package org.apache.rocketmq.common;

/** Stand-in for BrokerConfig: the pools, queues and fast-failure settings the agent reads. */
public class BrokerConfig {
    private int sendMessageThreadPoolNums = 1;
    private int adminBrokerThreadPoolNums = 1;
    private int sendThreadPoolQueueCapacity = 10000;
    private int putThreadPoolQueueCapacity = 10000;
    private int pullThreadPoolQueueCapacity = 100000;
    private int litePullThreadPoolQueueCapacity = 100000;
    private int ackThreadPoolQueueCapacity = 100000;
    private int replyThreadPoolQueueCapacity = 10000;
    private int queryThreadPoolQueueCapacity = 20000;
    private int clientManagerThreadPoolQueueCapacity = 1000000;
    private int consumerManagerThreadPoolQueueCapacity = 1000000;
    private int heartbeatThreadPoolQueueCapacity = 50000;
    private int endTransactionPoolQueueCapacity = 100000;
    private int adminBrokerThreadPoolQueueCapacity = 10000;
    private int loadBalanceThreadPoolQueueCapacity = 100000;
    private volatile boolean brokerFastFailureEnable = true;
    private volatile long waitTimeMillsInSendQueue = 200;
    private volatile long waitTimeMillsInPullQueue = 5 * 1000;
    private volatile long waitTimeMillsInLitePullQueue = 5 * 1000;
    private volatile long waitTimeMillsInHeartbeatQueue = 31 * 1000;
    private volatile long waitTimeMillsInTransactionQueue = 3 * 1000;
    private volatile long waitTimeMillsInAckQueue = 3000;
    private volatile long waitTimeMillsInAdminBrokerQueue = 5 * 1000;

    public int getSendMessageThreadPoolNums() { return sendMessageThreadPoolNums; }
    public void setSendMessageThreadPoolNums(int v) { sendMessageThreadPoolNums = v; }
    public int getAdminBrokerThreadPoolNums() { return adminBrokerThreadPoolNums; }
    public void setAdminBrokerThreadPoolNums(int v) { adminBrokerThreadPoolNums = v; }
    public int getSendThreadPoolQueueCapacity() { return sendThreadPoolQueueCapacity; }
    public void setSendThreadPoolQueueCapacity(int v) { sendThreadPoolQueueCapacity = v; }
    public int getPutThreadPoolQueueCapacity() { return putThreadPoolQueueCapacity; }
    public int getPullThreadPoolQueueCapacity() { return pullThreadPoolQueueCapacity; }
    public int getLitePullThreadPoolQueueCapacity() { return litePullThreadPoolQueueCapacity; }
    public int getAckThreadPoolQueueCapacity() { return ackThreadPoolQueueCapacity; }
    public int getReplyThreadPoolQueueCapacity() { return replyThreadPoolQueueCapacity; }
    public int getQueryThreadPoolQueueCapacity() { return queryThreadPoolQueueCapacity; }
    public int getClientManagerThreadPoolQueueCapacity() { return clientManagerThreadPoolQueueCapacity; }
    public int getConsumerManagerThreadPoolQueueCapacity() { return consumerManagerThreadPoolQueueCapacity; }
    public int getHeartbeatThreadPoolQueueCapacity() { return heartbeatThreadPoolQueueCapacity; }
    public int getEndTransactionPoolQueueCapacity() { return endTransactionPoolQueueCapacity; }
    public int getAdminBrokerThreadPoolQueueCapacity() { return adminBrokerThreadPoolQueueCapacity; }
    public void setAdminBrokerThreadPoolQueueCapacity(int v) { adminBrokerThreadPoolQueueCapacity = v; }
    public int getLoadBalanceThreadPoolQueueCapacity() { return loadBalanceThreadPoolQueueCapacity; }
    public boolean isBrokerFastFailureEnable() { return brokerFastFailureEnable; }
    public void setBrokerFastFailureEnable(boolean v) { brokerFastFailureEnable = v; }
    public long getWaitTimeMillsInSendQueue() { return waitTimeMillsInSendQueue; }
    public void setWaitTimeMillsInSendQueue(long v) { waitTimeMillsInSendQueue = v; }
    public long getWaitTimeMillsInPullQueue() { return waitTimeMillsInPullQueue; }
    public long getWaitTimeMillsInLitePullQueue() { return waitTimeMillsInLitePullQueue; }
    public long getWaitTimeMillsInHeartbeatQueue() { return waitTimeMillsInHeartbeatQueue; }
    public long getWaitTimeMillsInTransactionQueue() { return waitTimeMillsInTransactionQueue; }
    public long getWaitTimeMillsInAckQueue() { return waitTimeMillsInAckQueue; }
    public long getWaitTimeMillsInAdminBrokerQueue() { return waitTimeMillsInAdminBrokerQueue; }
    public void setWaitTimeMillsInAdminBrokerQueue(long v) { waitTimeMillsInAdminBrokerQueue = v; }
}
