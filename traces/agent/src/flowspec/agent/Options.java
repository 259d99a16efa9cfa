package flowspec.agent;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The agent's options, {@code -javaagent:flowspec-agent.jar=out=DIR,level=queues,...}
 * (docs/agent.md lists them).
 */
final class Options {
    /** The executors the spec models, by its names (spec.profiles.ExecutorName). */
    static final List<String> ALL_EXECUTORS = Arrays.asList(
        "send", "pull", "litePull", "heartbeat", "endTransaction", "ack", "query",
        "clientManage", "consumerManage", "reply", "loadBalance", "admin");

    Path out;
    String level = "queues";
    int buffer = 65536;
    int eventsPerFile = 1_000_000;
    List<String> executors = new ArrayList<>(ALL_EXECUTORS);
    int ioThreads = -1; // -1: NettyServerConfig.serverWorkerThreads
    int mappedFilePuts = -1; // -1: mappedFileSizeCommitLog / messageBytes
    int messageBytes = 1024;
    String traceId;
    String profile; // null: MQVersion.CURRENT_VERSION
    // For the agent's own tests (tests/test_agent.py), which must make the agent fail on purpose:
    long faultAfter = -1; // the n-th RequestArrives hook throws
    long writerStartDelayMs = 0; // the writer starts this late (at the latest when the trace ends), so that a small buffer overflows

    static Options parse(String args) {
        Options o = new Options();
        if (args != null && !args.isEmpty()) {
            for (String pair : args.split(",(?=[a-z_]+=)")) {
                int eq = pair.indexOf('=');
                if (eq < 0) {
                    throw new IllegalArgumentException("flowspec agent: option '" + pair + "' is not name=value");
                }
                String name = pair.substring(0, eq);
                String value = pair.substring(eq + 1);
                switch (name) {
                    case "out": o.out = Paths.get(value); break;
                    case "level": o.level = value; break;
                    case "buffer": o.buffer = Integer.parseInt(value); break;
                    case "events_per_file": o.eventsPerFile = Integer.parseInt(value); break;
                    case "executors": o.executors = Arrays.asList(value.split("[,+]")); break;
                    case "io_threads": o.ioThreads = Integer.parseInt(value); break;
                    case "mapped_file_puts": o.mappedFilePuts = Integer.parseInt(value); break;
                    case "message_bytes": o.messageBytes = Integer.parseInt(value); break;
                    case "trace_id": o.traceId = value; break;
                    case "profile": o.profile = value; break;
                    case "fault_after": o.faultAfter = Long.parseLong(value); break;
                    case "writer_start_delay_ms": o.writerStartDelayMs = Long.parseLong(value); break;
                    default:
                        throw new IllegalArgumentException("flowspec agent: unknown option '" + name
                            + "' (known: out, level, buffer, events_per_file, executors, io_threads, "
                            + "mapped_file_puts, message_bytes, trace_id, profile)");
                }
            }
        }
        if (o.out == null) {
            throw new IllegalArgumentException("flowspec agent: option out=DIR is required");
        }
        if (!o.level.equals("queues") && !o.level.equals("full")) {
            throw new IllegalArgumentException("flowspec agent: level '" + o.level
                + "' is not supported; this agent records 'queues' or 'full' (docs/agent.md)");
        }
        for (String e : o.executors) {
            if (!ALL_EXECUTORS.contains(e)) {
                throw new IllegalArgumentException("flowspec agent: unknown executor '" + e + "' (known: " + ALL_EXECUTORS + ")");
            }
        }
        if (o.buffer < 1) {
            throw new IllegalArgumentException("flowspec agent: buffer must be >= 1");
        }
        return o;
    }
}
