package flowspec.agent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * What the instrumented broker code calls: each method is one code point of
 * docs/instrumenting.md, at the {@code queues} and {@code full} levels. It keeps the little state the events need
 * (which thread is which IO thread or worker, what a dispatch or a worker's run has done so far)
 * and emits the events under the recorder's step lock.
 *
 * <p>Every method is public (the advice is inlined into broker classes) and catches everything:
 * a failure is counted by the recorder and marks the trace incomplete; it never reaches the
 * broker. The lock is always released.
 */
public final class Hooks {
    private static Recorder rec;
    private static Options options;
    /** The 'full' level: the put path's steps too. */
    private static boolean full;

    /** What a dispatch ({@code processRequestCommand}) has done so far on this IO thread. */
    private static final class Dispatch {
        final int ioThread;
        final Object command;
        final Object handler;
        Object task; // the RequestTask created, if any
        boolean rejected; // processor.rejectRequest() returned true
        boolean queued; // the executor's queue accepted the task
        boolean overloaded; // the executor's queue refused it
        final List<Event.Answer> answers = new ArrayList<>(1);

        Dispatch(int ioThread, Object command, Object handler) {
            this.ioThread = ioThread;
            this.command = command;
            this.handler = handler;
        }
    }

    /** A worker thread: its executor and its index in creation order. */
    private static final class Worker {
        final String executor;
        final int index;

        Worker(String executor, int index) {
            this.executor = executor;
            this.index = index;
        }
    }

    /** What a worker's run of a RequestTask has done so far. */
    private static final class Run {
        final Worker worker;
        final boolean cancelled;
        final long requestId;
        final boolean oneway;
        int putDepth; // inside DefaultMessageStore's put methods
        Boolean busy; // the put pre-check's isOSPageCacheBusy(), null if no put
        boolean inLock; // 'full': holds the put lock
        Event released; // 'full': the lock's release, whose kind the put's outcome decides
        final List<Event.Answer> answers = new ArrayList<>(1);

        Run(Worker worker, boolean cancelled, long requestId, boolean oneway) {
            this.worker = worker;
            this.cancelled = cancelled;
            this.requestId = requestId;
            this.oneway = oneway;
        }
    }

    /** A fast-failure run on the scheduler thread: phase 1 (busy drain) or 2, and the queue scanned. */
    private static final class FastFailureRun {
        int phase = 1;
        RecordingQueue queue;
        long busyCheckStarted; // the clock as phase 1's last isOSPageCacheBusy() was entered
        long headCheckStarted; // the clock as the scan's last head was cast, before the broker reads its age
    }

    private static final ThreadLocal<Dispatch> DISPATCH = new ThreadLocal<>();
    private static final ThreadLocal<Run> RUN = new ThreadLocal<>();
    private static final ThreadLocal<FastFailureRun> FAST_FAILURE = new ThreadLocal<>();

    // The rest is guarded by the step lock.
    private static final Map<Thread, Integer> IO_THREADS = new HashMap<>();
    private static final Map<Thread, Worker> WORKERS = new HashMap<>();
    private static final Map<String, Integer> THREADS_STARTED = new HashMap<>();
    private static final Map<Object, Worker> STARTED_WITH = new IdentityHashMap<>(); // RequestTask -> its new worker
    private static final Map<Object, Object> QUEUED = new IdentityHashMap<>(); // queued element -> its RequestTask
    private static final Map<Object, Integer> CHANNELS = new IdentityHashMap<>();
    private static final Map<Object, String> EXECUTORS = new IdentityHashMap<>(); // executor -> spec name
    /** The put path's answers, numbered at the put lock's release and not yet written, by request id. */
    private static final Map<Long, Event> UNWRITTEN = new java.util.concurrent.ConcurrentHashMap<>();
    private static long faultCountdown = -1;
    /** The header's io_threads: a trace whose dispatching threads outnumber it cannot be valid. */
    private static int ioThreadsDeclared = Integer.MAX_VALUE;

    private Hooks() {
    }

    static void install(Recorder recorder, Options opts) {
        rec = recorder;
        options = opts;
        full = opts.level.equals("full");
        faultCountdown = opts.faultAfter;
    }

    static Recorder recorder() {
        return rec;
    }

    static boolean inFastFailureRun() {
        return FAST_FAILURE.get() != null;
    }

    /** The fault_after option: a planted failure of a hook, to test that the broker never sees one. */
    private static void maybeFault() {
        if (faultCountdown >= 0 && faultCountdown-- == 0) {
            throw new IllegalStateException("fault planted by the agent's fault_after option");
        }
    }

    // ------------------------------------------------------------------ broker start

    /** BrokerController's constructor returned: its executors' queues become RecordingQueues. */
    public static void controllerConstructed(Object controller) {
        try {
            Broker.replaceQueues(controller, options);
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** BrokerController.start(): the executors exist; the header's configuration is read now. */
    public static void controllerStarting(Object controller) {
        rec.step.lock();
        try {
            long start = rec.now();
            EXECUTORS.putAll(Broker.executors(controller, options));
            ioThreadsDeclared = Broker.ioThreads(controller, options);
            rec.setHeader(Broker.header(controller, options, start), () -> Broker.header(controller, options, start),
                foreign -> Broker.environment(controller, foreign));
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            rec.step.unlock();
        }
    }

    // ------------------------------------------------------------------ dispatch (IO thread)

    /** NettyRemotingAbstract.processRequestCommand entry: RequestArrives; the lock is held to its exit. */
    public static void dispatchEnter(Object handler, Object ctx, Object cmd) {
        rec.step.lock();
        try {
            Thread t = Thread.currentThread();
            Integer io = IO_THREADS.get(t);
            if (io == null) {
                io = IO_THREADS.size();
                IO_THREADS.put(t, io);
                if (io == ioThreadsDeclared) {
                    throw new IllegalStateException("more threads dispatch requests than the header's io_threads ("
                        + ioThreadsDeclared + "): set the agent's io_threads option");
                }
            }
            Dispatch d = new Dispatch(io, cmd, handler);
            DISPATCH.set(d);
            Event e = Event.onIoThread("RequestArrives", io);
            e.code = Reflect.getInt(cmd, "getCode");
            e.oneway = Reflect.getBool(cmd, "isOnewayRPC");
            e.requestId = requestId(Reflect.call(ctx, "channel"), Reflect.getInt(cmd, "getOpaque"));
            e.topic = topic(cmd);
            maybeFault();
            rec.emit(e);
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** processor.rejectRequest() returned. */
    public static void rejectRequestReturned(boolean rejected) {
        try {
            Dispatch d = DISPATCH.get();
            if (d != null && rejected) {
                d.rejected = true;
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** {@code new RequestTask(...)} returned: DispatchCreatesTask, at the task's createTimestamp. */
    public static void taskCreated(Object task) {
        try {
            Dispatch d = DISPATCH.get();
            if (d == null) {
                return; // a RequestTask built outside a dispatch is not a request the spec sees
            }
            d.task = task;
            rec.emitAt(Event.onIoThread("DispatchCreatesTask", d.ioThread), Reflect.getLong(task, "getCreateTimestamp"));
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** A RecordingQueue's offer returned (step lock held): DispatchQueuesTask or InternalTaskSubmitted. */
    static void offered(RecordingQueue q, Runnable element, boolean accepted) {
        try {
            Dispatch d = DISPATCH.get();
            if (d != null && d.task != null) {
                if (accepted) {
                    d.queued = true;
                    QUEUED.put(element, d.task);
                    if (q.modeled) {
                        rec.emit(Event.onIoThread("DispatchQueuesTask", d.ioThread));
                    }
                } else {
                    d.overloaded = true;
                }
            } else if (accepted && q.modeled) {
                rec.foreignTask(q.executor);
                rec.emit(Event.onExecutor("InternalTaskSubmitted", q.executor));
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** processRequestCommand exit: the dispatch's outcome, then the lock is released. */
    public static void dispatchExit() {
        try {
            Dispatch d = DISPATCH.get();
            DISPATCH.remove();
            if (d != null) {
                Event e;
                if (d.rejected) {
                    e = Event.onIoThread("DispatchRejectsRequest", d.ioThread);
                } else if (d.task == null) {
                    e = Event.onIoThread("DispatchAnswersNotSupported", d.ioThread);
                } else if (d.overloaded) {
                    e = Event.onIoThread("DispatchRejectsOverload", d.ioThread);
                } else if (d.queued) {
                    e = null; // DispatchQueuesTask was recorded at the offer
                } else {
                    e = Event.onIoThread("DispatchStartsWorker", d.ioThread);
                    String executor = Broker.executorOf(d.handler, d.command, EXECUTORS);
                    int index = THREADS_STARTED.merge(executor, 1, Integer::sum) - 1;
                    STARTED_WITH.put(d.task, new Worker(executor, index));
                }
                if (e != null) {
                    e.responses.addAll(d.answers);
                    rec.emit(e);
                }
            }
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            DISPATCH.remove();
            if (rec.step.isHeldByCurrentThread()) {
                rec.step.unlock();
            }
        }
    }

    // ------------------------------------------------------------------ workers

    /** A worker removed {@code element} from a RecordingQueue (step lock held). */
    static void taken(RecordingQueue q, Runnable element) {
        try {
            Object task = QUEUED.remove(element);
            if (!q.modeled) {
                return;
            }
            Worker w = worker(q.executor);
            String kind;
            if (task == null) {
                kind = "WorkerRunsForeignTask";
            } else if (Reflect.getBool(task, "isStopRun")) {
                kind = "WorkerDiscardsCancelledTask";
            } else {
                kind = "WorkerTakesTask";
            }
            rec.emit(Event.onWorker(kind, w.executor, w.index));
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    private static Worker worker(String executor) {
        Thread t = Thread.currentThread();
        Worker w = WORKERS.get(t);
        if (w == null) {
            // A thread the agent did not see start (e.g. by a foreign task): the next index.
            w = new Worker(executor, THREADS_STARTED.merge(executor, 1, Integer::sum) - 1);
            WORKERS.put(t, w);
        }
        return w;
    }

    /** RequestTask.run() entry on a worker thread. */
    public static void runEnter(Object task) {
        rec.step.lock();
        try {
            Thread t = Thread.currentThread();
            Worker started = STARTED_WITH.remove(task);
            if (started != null) {
                WORKERS.put(t, started);
            }
            Worker w = WORKERS.get(t);
            if (w != null) {
                Object request = Reflect.get(task, "request");
                long id = requestId(Reflect.get(task, "channel"), Reflect.getInt(request, "getOpaque"));
                RUN.set(new Run(w, Reflect.getBool(task, "isStopRun"), id, Reflect.getBool(request, "isOnewayRPC")));
            }
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            rec.step.unlock();
        }
    }

    /** DefaultMessageStore's put methods: entry (+1) and exit (-1, {@code thrown} if by an exception). */
    public static void putScope(int delta, boolean thrown) {
        Run r = RUN.get();
        if (r == null) {
            return;
        }
        r.putDepth += delta;
        if (r.putDepth == 0 && r.released != null) {
            if (thrown) {
                r.released.kind = "WorkerThrowsInsideLock";
            }
            r.released.arrived();
            r.released = null;
        }
    }

    /** 'full': a PutMessageLock's lock() returned inside a worker's put: WorkerAcquiresPutLock. */
    public static void putLockAcquired() {
        try {
            Run r = RUN.get();
            if (!full || r == null || r.putDepth == 0 || r.inLock) {
                return;
            }
            r.inLock = true;
            rec.emitLocked(Event.onWorker("WorkerAcquiresPutLock", r.worker.executor, r.worker.index));
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** 'full': a mapped file's commit0() entered (the commit service): the lock is held to its exit. */
    public static boolean commitEntering() {
        if (!full) {
            return false;
        }
        rec.step.lock();
        return true;
    }

    /** 'full': commit0() returned: CommitServiceCommits; the lock is released. */
    public static void commitReturned(boolean locked) {
        if (!locked) {
            return;
        }
        try {
            rec.emit(new Event("CommitServiceCommits"));
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            rec.step.unlock();
        }
    }

    /** 'full': TransientStorePool.returnBuffer entered: CommitServiceReturnsBuffer. */
    public static void bufferReturning() {
        try {
            if (full) {
                rec.emitLocked(new Event("CommitServiceReturnsBuffer"));
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** The last file each MappedFileQueue returned: a different one inside the lock is a new file. */
    private static final Map<Object, Object> LAST_FILE = java.util.Collections.synchronizedMap(new IdentityHashMap<>());

    /** 'full': MappedFileQueue.getLastMappedFile returned; a new file inside the lock is WorkerCreatesMappedFile. */
    public static void mappedFileReturned(Object fileQueue, Object file) {
        try {
            if (!full || file == null) {
                return;
            }
            Object before = LAST_FILE.put(fileQueue, file);
            Run r = RUN.get();
            if (file != before && r != null && r.inLock) {
                rec.emitLocked(Event.onWorker("WorkerCreatesMappedFile", r.worker.executor, r.worker.index));
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /**
     * A PutMessageLock's unlock(), entered by a worker inside its put: the put path's answer
     * (SUCCESS, or SYSTEM_ERROR after an exception in the lock) belongs to this step in the spec
     * (WorkerAppendsAndUnlocks, WorkerThrowsInsideLock), so its Response event is numbered now,
     * in the order the writers release the lock, and filled when the processor writes the answer.
     * A oneway request gets no answer, hence no event.
     */
    public static void putLockReleasing() {
        try {
            Run r = RUN.get();
            if (full) {
                if (r == null || !r.inLock) {
                    return; // not a worker's put, or an inner lock of the same release
                }
                r.inLock = false;
                // WorkerAppendsAndUnlocks, or WorkerThrowsInsideLock if the put ends by an exception
                Event e = Event.onWorker("WorkerAppendsAndUnlocks", r.worker.executor, r.worker.index);
                e.awaiting(r.oneway ? 1 : 2);
                r.released = e;
                if (!r.oneway) {
                    UNWRITTEN.put(r.requestId, e);
                }
                rec.emitLocked(e);
                return;
            }
            if (r == null || r.putDepth == 0 || r.oneway || UNWRITTEN.containsKey(r.requestId)) {
                return; // not a worker's put, or an inner lock of the same release
            }
            Event e = new Event("Response");
            e.awaiting(1);
            UNWRITTEN.put(r.requestId, e);
            rec.emitLocked(e);
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /**
     * DefaultMessageStore.isOSPageCacheBusy() entered: inside a worker's put it is the put
     * pre-check, which reads the lock holder's beginTimeInLock, so the step lock is held across
     * it (true: the caller must pass it to {@link #pageCacheBusyReturned}); in a fast-failure run
     * it is phase 1's loop condition, whose clock FastFailureEndsBusyDrain takes.
     */
    public static boolean pageCacheCheckEntering() {
        FastFailureRun f = FAST_FAILURE.get();
        if (f != null) {
            f.busyCheckStarted = System.currentTimeMillis();
            return false;
        }
        Run r = RUN.get();
        if (r == null || r.putDepth == 0) {
            return false;
        }
        rec.step.lock();
        return true;
    }

    /**
     * The put pre-check returned: busy is WorkerFindsPageCacheBusy, numbered now (while the
     * holder cannot release the lock) and filled with the [PC_SYNCHRONIZED] answer when written.
     */
    public static void pageCacheBusyReturned(boolean busy, boolean locked) {
        if (!locked) {
            return;
        }
        try {
            Run r = RUN.get();
            r.busy = busy;
            if (busy) {
                Event e = Event.onWorker("WorkerFindsPageCacheBusy", r.worker.executor, r.worker.index);
                if (!r.oneway) {
                    e.awaiting(1);
                    UNWRITTEN.put(r.requestId, e);
                }
                rec.emit(e);
            } else if (full) {
                rec.emit(Event.onWorker("WorkerPassesPutCheck", r.worker.executor, r.worker.index));
            }
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            rec.step.unlock();
        }
    }

    /** RequestTask.run() exit: the worker's step, with the answers it wrote. */
    public static void runExit() {
        Run r = RUN.get();
        if (r == null) {
            return;
        }
        RUN.remove();
        rec.step.lock();
        try {
            if (r.cancelled) {
                return; // WorkerDiscardsCancelledTask was recorded when it was taken
            }
            if (r.busy == null) {
                Event e = Event.onWorker("WorkerProcessesRequest", r.worker.executor, r.worker.index);
                e.responses.addAll(r.answers);
                rec.emit(e);
            } else if (!r.answers.isEmpty()) {
                // The put path's answers are numbered at the check or the lock's release, above.
                throw new IllegalStateException("a send was answered " + r.answers.size()
                    + " times besides the answer of its put");
            }
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            rec.step.unlock();
        }
    }

    // ------------------------------------------------------------------ answers

    /** A channel write of a RemotingCommand ({@code ChannelHandlerContext.writeAndFlush}). */
    public static void written(Object ctx, Object msg) {
        try {
            if (msg == null || !msg.getClass().getName().endsWith(".RemotingCommand")
                || !Reflect.getBool(msg, "isResponseType") || FAST_FAILURE.get() != null) {
                return; // not an answer, or fast failure's (recorded by returnResponse)
            }
            Event.Answer a = new Event.Answer(requestId(Reflect.call(ctx, "channel"), Reflect.getInt(msg, "getOpaque")),
                Reflect.getInt(msg, "getCode"), (String) Reflect.call(msg, "getRemark"));
            Event unwritten = UNWRITTEN.remove(a.opaque);
            if (unwritten != null) {
                unwritten.responses.add(a);
                unwritten.arrived();
                return;
            }
            Dispatch d = DISPATCH.get();
            Run r = RUN.get();
            if (d != null) {
                d.answers.add(a);
            } else if (r != null) {
                r.answers.add(a);
            } else {
                // Written by a thread outside any step the agent follows (e.g. a put's future
                // completed on another thread): the answer alone.
                Event e = new Event("Response");
                e.responses.add(a);
                rec.emitLocked(e);
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    // ------------------------------------------------------------------ fast failure

    /** BrokerConfig.isBrokerFastFailureEnable() returned; on the scheduler's thread, false is a skipped run. */
    public static void fastFailureSwitchRead(boolean enabled) {
        try {
            if (!enabled && FAST_FAILURE.get() == null
                && Thread.currentThread().getName().startsWith("BrokerFastFailureScheduledThread")) {
                rec.emitLocked(new Event("FastFailureSkipsRun"));
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** cleanExpiredRequest() entry: FastFailureStartsRun; the lock is held to its exit. */
    public static void cleanEnter() {
        rec.step.lock();
        try {
            FAST_FAILURE.set(new FastFailureRun());
            rec.emit(new Event("FastFailureStartsRun"));
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** cleanExpiredRequestInQueue(queue, wait) entry: phase 1 ended if it had not. */
    public static void cleanQueueEnter(Object queue) {
        try {
            FastFailureRun f = FAST_FAILURE.get();
            if (f == null) {
                return;
            }
            endBusyDrain(f);
            f.headCheckStarted = System.currentTimeMillis();
            f.queue = queue instanceof RecordingQueue && ((RecordingQueue) queue).modeled ? (RecordingQueue) queue : null;
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /**
     * Phase 1 ended: FastFailureEndsBusyDrain, stamped with the clock as its last busy check
     * began, not now. That check found the store not busy (or the queue empty) at a reading the
     * agent cannot see, and the store turns busy as the clock passes beginTimeInLock +
     * osPageCacheBusyTimeOutMills: stamped after the check, a run preempted in between (12 ms
     * once on a loaded machine) reached the spec as ending phase 1 while the store was already
     * busy with sends in the queue, which no run of the spec does. A reading taken before the
     * broker's own is never busy where the broker's was not. (A run whose loop never checked
     * stamps 0, which the recorder raises to the trace's last ts.)
     */
    private static void endBusyDrain(FastFailureRun f) {
        if (f.phase == 1) {
            f.phase = 2;
            rec.emitAt(new Event("FastFailureEndsBusyDrain"), f.busyCheckStarted);
        }
    }

    /**
     * cleanExpiredRequestInQueue exit: its one {@code break}, FastFailureStopsAtHead, stamped with
     * the clock as its last head was cast, before the broker read that head's age, for the reason
     * of {@link #endBusyDrain}: stamped at the exit, a run preempted in between stopped at a head
     * that was 40 ms old by the stamp, as old as the wait (timeout, 4.9.8 at 'queues', loaded).
     */
    public static void cleanQueueExit() {
        try {
            FastFailureRun f = FAST_FAILURE.get();
            if (f != null && f.queue != null) {
                rec.emitAt(Event.onQueue("FastFailureStopsAtHead", f.queue.executor), f.headCheckStarted);
                f.queue = null;
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** BrokerFastFailure.castRunnable returned; null in phase 1 drops a foreign element. */
    public static void castReturned(Object task) {
        try {
            FastFailureRun f = FAST_FAILURE.get();
            if (f != null && f.phase == 1 && task == null) {
                rec.emit(new Event("FastFailureDropsForeignElement"));
            } else if (f != null) {
                f.headCheckStarted = System.currentTimeMillis();
            }
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /**
     * RequestTask.returnResponse(code, remark) in a fast-failure run: the [PCBUSY_CLEAN_QUEUE] or
     * [TIMEOUT_CLEAN_QUEUE] step, stamped with the clock reading its remark reports.
     */
    public static void fastFailureAnswers(Object task, int code, String remark) {
        try {
            FastFailureRun f = FAST_FAILURE.get();
            if (f == null) {
                return;
            }
            Object request = Reflect.get(task, "request");
            Object channel = Reflect.get(task, "channel");
            Event e = f.phase == 1 || f.queue == null
                ? new Event("FastFailureDrainsBusySendQueue")
                : Event.onQueue("FastFailureCleansExpiredHead", f.queue.executor);
            e.responses.add(new Event.Answer(requestId(channel, Reflect.getInt(request, "getOpaque")), code, remark));
            QUEUED.values().remove(task);
            rec.emitAt(e, Reflect.getLong(task, "getCreateTimestamp") + periodInQueue(remark));
        } catch (Throwable t) {
            rec.agentError(t);
        }
    }

    /** The "period in queue: Nms" of a cleaning remark: the scheduler's clock minus the task's createTimestamp. */
    static long periodInQueue(String remark) {
        int at = remark.indexOf("period in queue: ");
        int end = remark.indexOf("ms,", at);
        if (at < 0 || end < 0) {
            throw new IllegalStateException("a cleaning remark without its period in queue: " + remark);
        }
        return Long.parseLong(remark.substring(at + "period in queue: ".length(), end));
    }

    /** cleanExpiredRequest() exit: phase 1 ends even if no queue was scanned; the lock is released. */
    public static void cleanExit() {
        try {
            FastFailureRun f = FAST_FAILURE.get();
            FAST_FAILURE.remove();
            if (f != null) {
                endBusyDrain(f);
            }
        } catch (Throwable t) {
            rec.agentError(t);
        } finally {
            FAST_FAILURE.remove();
            if (rec.step.isHeldByCurrentThread()) {
                rec.step.unlock();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * The trace's request id of an opaque on a channel: the opaque (as unsigned) for the first
     * channel seen, offset by 2^32 for each later one, so opaques of different clients never clash.
     */
    private static long requestId(Object channel, int opaque) {
        synchronized (CHANNELS) {
            Integer c = CHANNELS.get(channel);
            if (c == null) {
                c = CHANNELS.size();
                CHANNELS.put(channel, c);
            }
            return ((long) c << 32) | (opaque & 0xffffffffL);
        }
    }

    private static String topic(Object cmd) {
        Object ext = Reflect.call(cmd, "getExtFields");
        if (ext instanceof Map) {
            Object t = ((Map<?, ?>) ext).get("topic");
            if (t == null) {
                t = ((Map<?, ?>) ext).get("b"); // SendMessageRequestHeaderV2's short name
            }
            if (t != null) {
                return t.toString();
            }
        }
        return "";
    }

    static int threads(Object executor) {
        return ((ThreadPoolExecutor) executor).getCorePoolSize();
    }
}
