package org.apache.rocketmq.common.message;

/**
 * Stand-in for MessageExtBrokerInner. Instead of a body it carries what the scenarios plant in
 * the store: how long the append takes (a slow disk) and whether it throws inside the put lock.
 */
public class MessageExtBrokerInner {
    private final String topic;
    private final long appendMillis;
    private final boolean failInsideLock;

    public MessageExtBrokerInner(String topic, long appendMillis, boolean failInsideLock) {
        this.topic = topic;
        this.appendMillis = appendMillis;
        this.failInsideLock = failInsideLock;
    }

    public String getTopic() { return topic; }
    public long getAppendMillis() { return appendMillis; }
    public boolean isFailInsideLock() { return failInsideLock; }
}
