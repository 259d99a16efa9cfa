package flowspec.agent;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An executor's work queue, put in place of the broker's {@code LinkedBlockingQueue} when
 * BrokerController is constructed (before any executor is built on it), with the same capacity.
 *
 * <p>A task enters and leaves it under the recorder's step lock, so {@code DispatchQueuesTask}
 * and {@code WorkerTakesTask} take their {@code seq} at the moment the queue changes: no other
 * thread can see the queue between the change and the event. A worker waiting for a task holds
 * no lock.
 */
public final class RecordingQueue extends LinkedBlockingQueue<Runnable> {
    private static final long serialVersionUID = 1L;
    /** The executor's name in the spec (spec.profiles.ExecutorName). */
    final String executor;
    /** Whether the trace models this executor (the agent's {@code executors} option). */
    final boolean modeled;
    private final transient Object arrival = new Object();

    RecordingQueue(String executor, int capacity, boolean modeled) {
        super(capacity);
        this.executor = executor;
        this.modeled = modeled;
    }

    @Override
    public boolean offer(Runnable task) {
        Recorder rec = Hooks.recorder();
        rec.step.lock();
        boolean accepted;
        try {
            accepted = super.offer(task);
            Hooks.offered(this, task, accepted);
        } finally {
            rec.step.unlock();
        }
        if (accepted) {
            synchronized (arrival) {
                arrival.notifyAll();
            }
        }
        return accepted;
    }

    @Override
    public Runnable take() throws InterruptedException {
        while (true) {
            Runnable task = pollRecorded();
            if (task != null) {
                return task;
            }
            awaitArrival(100);
        }
    }

    @Override
    public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
        if (Hooks.inFastFailureRun()) {
            return super.poll(timeout, unit); // fast failure records its own steps
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (true) {
            Runnable task = pollRecorded();
            if (task != null) {
                return task;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            awaitArrival(Math.max(1, Math.min(100, TimeUnit.NANOSECONDS.toMillis(left))));
        }
    }

    /** A worker's take: remove the head and record it in one step. */
    private Runnable pollRecorded() {
        Recorder rec = Hooks.recorder();
        rec.step.lock();
        try {
            Runnable task = super.poll();
            if (task != null) {
                Hooks.taken(this, task);
            }
            return task;
        } finally {
            rec.step.unlock();
        }
    }

    private void awaitArrival(long millis) throws InterruptedException {
        synchronized (arrival) {
            if (isEmpty()) {
                arrival.wait(millis);
            }
        }
    }
}
