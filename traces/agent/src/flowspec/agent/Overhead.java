package flowspec.agent;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The agent's cost per event, without JMH (docs/agent.md, "Overhead"):
 * {@code java -cp build/flowspec-agent.jar flowspec.agent.Overhead [EVENTS]}.
 *
 * <p>It times what a broker thread pays for one event (take the step lock, build the event,
 * number it, offer it to the buffer, release the lock) on one thread and on two contending
 * threads, and how many events a second the writer thread renders and writes (the rate a broker
 * can sustain before the buffer fills and the trace is marked incomplete). Each measurement
 * is repeated five times after a warm-up; it prints the median.
 */
public final class Overhead {
    private Overhead() {
    }

    public static void main(String[] args) throws Exception {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        Path dir = Files.createTempDirectory("flowspec-overhead");
        System.out.printf("events per run: %d; median of 5 runs after a warm-up%n", events);
        System.out.printf("emit, 1 broker thread, writer paused:   %6.1f ns/event%n", median(() -> emitting(dir, events, 1, true)));
        System.out.printf("emit, 1 broker thread, writer running:  %6.1f ns/event%n", median(() -> emitting(dir, events, 1, false)));
        System.out.printf("emit, 2 broker threads, writer running: %6.1f ns/event (wall time / events)%n",
            median(() -> emitting(dir, events, 2, false)));
        System.out.printf("writer: %,.0f events/s rendered as JSON Lines and written%n", 1e9 / median(() -> writing(dir, events)));
    }

    private interface Run {
        double nsPerEvent() throws Exception;
    }

    private static double median(Run run) throws Exception {
        run.nsPerEvent(); // warm-up
        double[] r = new double[5];
        for (int i = 0; i < r.length; i++) {
            r[i] = run.nsPerEvent();
        }
        java.util.Arrays.sort(r);
        return r[r.length / 2];
    }

    private static Recorder recorder(Path dir, int buffer, boolean writerPaused) throws Exception {
        return new Recorder(Options.parse("out=" + dir + ",trace_id=run-" + System.nanoTime() + ",buffer=" + buffer
            + (writerPaused ? ",writer_start_delay_ms=600000" : "")));
    }

    /** Broker threads' time per event; the buffer holds every event, so none is dropped or waited for. */
    private static double emitting(Path dir, int events, int threads, boolean writerPaused) throws Exception {
        Recorder rec = recorder(dir, events + 1, writerPaused);
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                for (int i = 0; i < events / threads; i++) {
                    rec.step.lock();
                    try {
                        rec.emit(Event.onWorker("WorkerTakesTask", "send", id));
                    } finally {
                        rec.step.unlock();
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        double ns = (double) (System.nanoTime() - t0) / events;
        if (!writerPaused) {
            rec.close();
        }
        return ns;
    }

    /** The writer's time per event: all events buffered first, then drained to disk. */
    private static double writing(Path dir, int events) throws Exception {
        Recorder rec = recorder(dir, events + 1, false);
        for (int i = 0; i < events; i++) {
            Event e = Event.onIoThread("RequestArrives", 0);
            e.code = 10;
            e.topic = "TopicTest";
            e.requestId = i;
            rec.emitLocked(e);
        }
        long t0 = System.nanoTime();
        rec.close();
        return (double) (System.nanoTime() - t0) / events;
    }
}
