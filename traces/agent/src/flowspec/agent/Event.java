package flowspec.agent;

import java.util.ArrayList;
import java.util.List;

/** One trace record, as the recorder buffers it; the writer thread renders it as a JSON line. */
final class Event {
    /** A response the broker wrote in this step: the request's opaque, the code, the remark. */
    static final class Answer {
        final long opaque;
        final int code;
        final String remark;

        Answer(long opaque, int code, String remark) {
            this.opaque = opaque;
            this.code = code;
            this.remark = remark;
        }
    }

    String kind; // decided late for the put lock's release at 'full' (appends or throws)
    long seq;
    long ts;
    int ioThread = -1;
    String executor;
    int worker = -1;
    String queue;
    // RequestArrives only
    int code;
    String topic;
    boolean oneway;
    long requestId;
    final List<Answer> responses = new ArrayList<>(1);
    /**
     * False while the event holds its place in the order but not yet its content: the put path's
     * answer, numbered when the put lock is released and filled when the processor writes it.
     */
    volatile boolean ready = true;
    private final java.util.concurrent.atomic.AtomicInteger missing = new java.util.concurrent.atomic.AtomicInteger();

    /** Holds the event's place until {@code parts} pieces of its content (its answer, its kind) arrive. */
    void awaiting(int parts) {
        missing.set(parts);
        ready = parts == 0;
    }

    /** One awaited piece arrived; the last makes the event ready for the writer. */
    void arrived() {
        if (missing.decrementAndGet() == 0) {
            ready = true;
        }
    }

    Event(String kind) {
        this.kind = kind;
    }

    static Event onIoThread(String kind, int ioThread) {
        Event e = new Event(kind);
        e.ioThread = ioThread;
        return e;
    }

    static Event onWorker(String kind, String executor, int worker) {
        Event e = new Event(kind);
        e.executor = executor;
        e.worker = worker;
        return e;
    }

    static Event onExecutor(String kind, String executor) {
        Event e = new Event(kind);
        e.executor = executor;
        return e;
    }

    static Event onQueue(String kind, String queue) {
        Event e = new Event(kind);
        e.queue = queue;
        return e;
    }

    /** The JSON line of this event in trace {@code traceId} (docs/trace-format.md, "Records"). */
    String toJson(String traceId) {
        StringBuilder b = new StringBuilder(160);
        b.append("{\"trace_id\":");
        string(b, traceId);
        b.append(",\"seq\":").append(seq).append(",\"ts\":").append(ts).append(",\"kind\":");
        string(b, kind);
        if (kind.equals("RequestArrives")) {
            b.append(",\"io_thread\":").append(ioThread).append(",\"code\":").append(code).append(",\"topic\":");
            string(b, topic);
            b.append(",\"oneway\":").append(oneway).append(",\"request_id\":").append(requestId);
        } else if (ioThread >= 0) {
            b.append(",\"io_thread\":").append(ioThread);
        }
        if (executor != null) {
            b.append(",\"executor\":");
            string(b, executor);
            if (worker >= 0) {
                b.append(",\"worker\":").append(worker);
            }
        }
        if (queue != null) {
            b.append(",\"queue\":");
            string(b, queue);
        }
        if (!responses.isEmpty()) {
            b.append(",\"responses\":[");
            for (int i = 0; i < responses.size(); i++) {
                Answer a = responses.get(i);
                if (i > 0) {
                    b.append(',');
                }
                b.append("{\"request_id\":").append(a.opaque).append(",\"code\":").append(a.code).append(",\"remark\":");
                string(b, a.remark);
                b.append('}');
            }
            b.append(']');
        }
        return b.append('}').toString();
    }

    /** Appends {@code s} as a JSON string (or null). */
    static void string(StringBuilder b, String s) {
        if (s == null) {
            b.append("null");
            return;
        }
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        b.append('"');
    }
}
