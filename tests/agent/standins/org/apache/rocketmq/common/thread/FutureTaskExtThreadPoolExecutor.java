package org.apache.rocketmq.common.thread;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.future.FutureTaskExt;

/** Stand-in for the broker's pools (ThreadUtils.newThreadPoolExecutor): submit wraps in FutureTaskExt. */
public class FutureTaskExtThreadPoolExecutor extends ThreadPoolExecutor {
    public FutureTaskExtThreadPoolExecutor(int core, int max, long keepAlive, TimeUnit unit,
        BlockingQueue<Runnable> queue, ThreadFactory threads) {
        super(core, max, keepAlive, unit, queue, threads);
    }

    @Override
    protected <T> RunnableFuture<T> newTaskFor(Runnable runnable, T value) {
        return new FutureTaskExt<>(runnable, value);
    }
}
