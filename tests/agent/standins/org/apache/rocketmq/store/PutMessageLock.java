package org.apache.rocketmq.store;

/** Stand-in for PutMessageLock, the commit log's put lock. */
public interface PutMessageLock {
    void lock();

    void unlock();
}
