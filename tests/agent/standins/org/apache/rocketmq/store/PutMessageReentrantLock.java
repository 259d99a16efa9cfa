package org.apache.rocketmq.store;

import java.util.concurrent.locks.ReentrantLock;

/** Stand-in for PutMessageReentrantLock. */
public class PutMessageReentrantLock implements PutMessageLock {
    private final ReentrantLock putMessageNormalLock = new ReentrantLock();

    @Override
    public void lock() {
        putMessageNormalLock.lock();
    }

    @Override
    public void unlock() {
        putMessageNormalLock.unlock();
    }
}
