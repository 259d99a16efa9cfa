package flowspec.agent;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The one sequencer of a broker's trace, and its writer.
 *
 * <p>Every step the agent records happens under {@link #step}: the agent holds it across the
 * broker code that makes a step visible (a whole dispatch, a queue operation, a fast-failure
 * run), so the order of {@code seq} is an order the broker really took (docs/instrumenting.md,
 * "How to emit"). {@link #emit} numbers an event and hands it to a bounded buffer; the writer
 * thread renders and writes it, so no broker thread waits for the disk. A full buffer drops the
 * event and counts it: the trace is then marked incomplete and {@code flowspec check} refuses it.
 *
 * <p>Files: {@code DIR/TRACE/part-00001.jsonl}, {@code part-00002.jsonl}, ... hold the events,
 * rotated every {@code events_per_file}; {@code part-00000.jsonl} holds the header, written when
 * the broker stops (the header needs the count of lost events). A trace whose broker was killed
 * has no header and is refused as invalid input, never judged.
 */
final class Recorder {
    /** Held across each recorded step; reentrant because a dispatch contains a queue offer. */
    final ReentrantLock step = new ReentrantLock();
    private long seq;
    private long lastTs;
    private final ArrayBlockingQueue<Event> buffer;
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong agentErrors = new AtomicLong();
    private volatile String firstError;
    private final Options options;
    private final Path dir;
    private final Thread writer;
    private volatile boolean closing;
    private final CountDownLatch closed = new CountDownLatch(1); // the trace has ended: a writer started late starts now
    private volatile String headerJson; // set once the broker's configuration is known
    private volatile Callable<String> headerNow; // reads the header again: has the configuration changed?
    private volatile Function<Map<String, Integer>, String> environment; // the header's environment, given the foreign tasks
    private final Map<String, Integer> foreign = new TreeMap<>(); // executor -> tasks broker code submitted to it (under step)
    private long written;

    Recorder(Options options) throws IOException {
        this.options = options;
        String traceId = options.traceId != null ? options.traceId : "broker-" + System.currentTimeMillis();
        options.traceId = traceId;
        this.dir = options.out.resolve(traceId);
        Files.createDirectories(dir);
        this.buffer = new ArrayBlockingQueue<>(options.buffer);
        this.writer = new Thread(this::drain, "flowspec-trace-writer");
        this.writer.setDaemon(true);
        this.writer.start();
    }

    /** The clock of the trace: the broker's (System.currentTimeMillis()), never going back. */
    long now() {
        long t = System.currentTimeMillis();
        return t > lastTs ? t : lastTs;
    }

    /** Numbers {@code e} and buffers it; the caller holds {@link #step}. Never blocks. */
    void emit(Event e) {
        emitAt(e, System.currentTimeMillis());
    }

    /**
     * Numbers {@code e}, stamped with the broker's own clock reading {@code t} (e.g. a
     * RequestTask's createTimestamp), and buffers it; the caller holds {@link #step}.
     */
    void emitAt(Event e, long t) {
        if (closing) {
            return; // the trace has ended: the header is being written
        }
        e.seq = ++seq;
        if (t > lastTs) {
            lastTs = t;
        }
        e.ts = lastTs;
        if (!buffer.offer(e)) {
            lost.incrementAndGet();
        }
    }

    /** Emits {@code e} under the step lock. */
    void emitLocked(Event e) {
        step.lock();
        try {
            emit(e);
        } finally {
            step.unlock();
        }
    }

    /** An exception inside the agent: counted, and the trace marked; the broker never sees it. */
    void agentError(Throwable t) {
        if (agentErrors.incrementAndGet() == 1) {
            firstError = t.toString();
            System.err.println("flowspec agent: an instrumentation hook failed; the trace is marked incomplete: " + t);
        }
    }

    long events() {
        return seq;
    }

    /**
     * The header as the broker starts, how to read it again when the recording ends, and how to
     * write its environment then (once the foreign tasks are counted).
     */
    void setHeader(String json, Callable<String> again, Function<Map<String, Integer>, String> environment) {
        this.headerNow = again;
        this.environment = environment;
        headerJson = json;
    }

    /** Broker code submitted a task to {@code executor}'s queue; the caller holds {@link #step}. */
    void foreignTask(String executor) {
        foreign.merge(executor, 1, Integer::sum);
    }

    private void drain() {
        List<Event> batch = new ArrayList<>(1024);
        Writer out = null;
        int part = 0;
        long inPart = 0;
        try {
            closed.await(options.writerStartDelayMs, TimeUnit.MILLISECONDS);
            while (true) {
                Event first = buffer.poll(50, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (out != null) {
                        out.flush();
                    }
                    if (closing && buffer.isEmpty()) {
                        break;
                    }
                    continue;
                }
                batch.add(first);
                buffer.drainTo(batch, 4096);
                for (Event e : batch) {
                    awaitContent(e);
                    if (out == null || inPart >= options.eventsPerFile) {
                        if (out != null) {
                            out.close();
                        }
                        part++;
                        out = open(String.format("part-%05d.jsonl", part));
                        inPart = 0;
                    }
                    out.write(e.toJson(options.traceId));
                    out.write('\n');
                    inPart++;
                    written++;
                }
                batch.clear();
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            agentError(e);
        } finally {
            if (out != null) {
                try {
                    out.close();
                } catch (IOException e) {
                    agentError(e);
                }
            }
        }
    }

    /** How long the writer waits for a reserved event's content before it gives up on the trace. */
    private static final long CONTENT_TIMEOUT_MS = 5_000;

    private void awaitContent(Event e) throws InterruptedException {
        long deadline = System.currentTimeMillis() + CONTENT_TIMEOUT_MS;
        while (!e.ready) {
            if (System.currentTimeMillis() > deadline) {
                agentError(new IllegalStateException("the content of the event at seq " + e.seq
                    + " (the put path's answer or outcome) never came"));
                return;
            }
            Thread.sleep(1);
        }
    }

    private Writer open(String name) throws IOException {
        return new BufferedWriter(Files.newBufferedWriter(dir.resolve(name), StandardCharsets.UTF_8), 1 << 16);
    }

    /**
     * Writes the remaining events and then the header, with {@code recording_incomplete} saying
     * why the trace is not whole (null when it is). Called from the JVM's shutdown hook.
     */
    void close() {
        step.lock();
        String header = headerJson;
        String why;
        String declared = "null";
        try {
            closing = true;
            closed.countDown();
            try {
                writer.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            List<String> reasons = incompleteness();
            if (header != null) {
                try {
                    if (!header.equals(headerNow.call())) {
                        reasons.add("the broker's configuration changed while it was recorded (an operator's updateBrokerConfig?),"
                            + " which the agent does not record: the header describes the broker as it started");
                    }
                    declared = environment.apply(foreign);
                } catch (Exception e) {
                    reasons.add("the broker's configuration could not be read again at the end: " + e);
                }
            }
            why = reasons.isEmpty() ? null : String.join("; ", reasons);
        } finally {
            step.unlock();
        }
        if (header == null) {
            System.err.println("flowspec agent: the broker never started (BrokerController.start); no trace header written in " + dir);
            return;
        }
        StringBuilder b = new StringBuilder(header.substring(0, header.length() - 1));
        b.append(",\"environment\":").append(declared);
        b.append(",\"recording_incomplete\":");
        Event.string(b, why);
        b.append("}\n");
        try {
            Files.write(dir.resolve("part-00000.jsonl"), b.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.err.println("flowspec agent: cannot write the trace header in " + dir + ": " + e);
        }
        System.err.println("flowspec agent: " + seq + " events recorded in " + dir
            + (why == null ? "" : " (incomplete: " + why + ")"));
    }

    private List<String> incompleteness() {
        List<String> why = new ArrayList<>();
        if (lost.get() > 0) {
            why.add(lost.get() + " events lost: the agent's buffer (" + options.buffer + " events) was full");
        }
        if (agentErrors.get() > 0) {
            why.add(agentErrors.get() + " failures inside the agent's hooks, the first: " + firstError);
        }
        if (writer.isAlive()) {
            why.add("the writer did not finish within 10 s");
        } else if (written + lost.get() != seq) {
            why.add((seq - written - lost.get()) + " events were not written");
        }
        return why;
    }
}
