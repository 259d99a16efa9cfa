package org.apache.rocketmq.store;

import java.util.ArrayDeque;
import java.util.Deque;

/** Stand-in for TransientStorePool: numbered buffers lent to new files, returned at full commit. */
public class TransientStorePool {
    private final Deque<Integer> availableBuffers = new ArrayDeque<>();

    public TransientStorePool(final int poolSize) {
        for (int i = 0; i < poolSize; i++) {
            availableBuffers.offer(i);
        }
    }

    public synchronized void returnBuffer(Integer buffer) {
        this.availableBuffers.offerFirst(buffer);
    }

    public synchronized Integer borrowBuffer() {
        return availableBuffers.pollFirst();
    }

    public synchronized int availableBufferNums() {
        return availableBuffers.size();
    }
}
