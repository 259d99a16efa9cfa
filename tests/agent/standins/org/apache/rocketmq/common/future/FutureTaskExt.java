package org.apache.rocketmq.common.future;

import java.util.concurrent.FutureTask;

/** Stand-in for FutureTaskExt: a FutureTask that keeps its Runnable (5.x package). */
public class FutureTaskExt<V> extends FutureTask<V> {
    private final Runnable runnable;

    public FutureTaskExt(Runnable runnable, V result) {
        super(runnable, result);
        this.runnable = runnable;
    }

    public Runnable getRunnable() {
        return runnable;
    }
}
