package flowspec.standin;

import io.netty.channel.AbstractChannelHandlerContext;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.PutMessageLock;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * Drives the stand-in broker through one scenario of tests/test_agent.py, as a client would:
 * requests decoded on IO threads and handed to processRequestCommand. When every request is
 * answered and the pools are idle it stops the broker and prints, as one JSON object, the
 * answers the client saw by remark tag (the test checks that the scenario did what it is for).
 *
 * <p>{@code java -javaagent:flowspec-agent.jar=... flowspec.standin.Scenario NAME}
 */
public final class Scenario {
    static final int SEND = 10; // RequestCode.SEND_MESSAGE
    static final int GET_BROKER_CONFIG = 26; // an AdminBrokerProcessor case

    private final BrokerConfig broker = new BrokerConfig();
    private final NettyServerConfig netty = new NettyServerConfig();
    private final MessageStoreConfig store = new MessageStoreConfig();
    private BrokerController controller;
    private final List<ExecutorService> ioThreads = new ArrayList<>();
    private final Client client = new Client();
    private final List<RemotingCommand> sent = new ArrayList<>();

    /** The client's connection: one context, whose writes are the answers it receives. */
    static final class Client extends AbstractChannelHandlerContext implements Channel {
        @Override
        public Channel channel() {
            return this;
        }
    }

    public static void main(String[] args) throws Exception {
        Scenario s = new Scenario();
        s.netty.setServerWorkerThreads(2);
        s.store.setBrokerRole(org.apache.rocketmq.store.config.BrokerRole.valueOf(System.getProperty("standin.role", "ASYNC_MASTER")));
        if (args[0].equals("throughput")) {
            s.throughput(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        } else {
            s.run(args[0]);
        }
        System.exit(0);
    }

    private void run(String name) throws Exception {
        switch (name) {
            case "steady": steady(); break;
            case "overload": overload(); break;
            case "timeout": timeout(); break;
            case "slow-disk": slowDisk(); break;
            case "fast-failure-off": broker.setBrokerFastFailureEnable(false); timeout(); break;
            case "fault-inside-lock": faultInsideLock(); break;
            case "pool-exhaustion": poolExhaustion(); break;
            case "foreign-task": foreignTask(); break;
            case "config-change": configChange(); break;
            default: throw new IllegalArgumentException("unknown scenario " + name);
        }
        quiesce();
    }

    private void start(int sendThreads, int sendCapacity) {
        store.setMappedFileSizeCommitLog(4 * org.apache.rocketmq.store.CommitLog.MESSAGE_BYTES); // a new file every 4 puts
        broker.setSendMessageThreadPoolNums(sendThreads);
        broker.setSendThreadPoolQueueCapacity(sendCapacity);
        broker.setAdminBrokerThreadPoolNums(1);
        broker.setAdminBrokerThreadPoolQueueCapacity(Math.max(16, sendCapacity));
        controller = new BrokerController(broker, netty, store);
        controller.initialize();
        controller.start();
        for (int i = 0; i < netty.getServerWorkerThreads(); i++) {
            int index = i;
            ioThreads.add(Executors.newSingleThreadExecutor(r -> new Thread(r, "NettyServerCodecThread_" + (index + 1))));
        }
    }

    /** Sends, admin commands and oneway sends on two IO threads, no pressure: every request served. */
    private void steady() throws Exception {
        start(2, 16);
        for (int i = 0; i < 24; i++) {
            request(i % 2, i % 6 == 5 ? GET_BROKER_CONFIG : SEND, i % 8 == 7, 0);
            Thread.sleep(2);
        }
    }

    /** One slow send thread and a queue of two: a burst is answered [OVERLOAD]. */
    private void overload() throws Exception {
        start(1, 2);
        for (int i = 0; i < 8; i++) {
            request(i % 2, SEND, false, 15);
        }
    }

    /** Queued sends wait longer than waitTimeMillsInSendQueue: fast failure answers [TIMEOUT_CLEAN_QUEUE]. */
    private void timeout() throws Exception {
        broker.setWaitTimeMillsInSendQueue(40);
        start(1, 8);
        Thread.sleep(1050); // fast failure runs from 1 s after start
        for (int i = 0; i < 6; i++) {
            request(i % 2, SEND, false, 25);
        }
    }

    /**
     * One put holds the lock far longer than osPageCacheBusyTimeOutMills: sends that came before
     * the store turned busy wait in the queue, and fast failure drains them [PCBUSY_CLEAN_QUEUE];
     * sends that come after are answered [REJECTREQUEST] at dispatch.
     *
     * <p>The sends that must wait are dispatched while this thread holds the put lock, before the
     * slow put can stamp beginTimeInLock: dispatched after the stamp, they had to beat the store
     * turning busy 60 ms later, and on a loaded machine they lost (every send [REJECTREQUEST],
     * none queued). One send thread, since a second would reach the queue while the store is
     * busy and answer its sends [PC_SYNCHRONIZED] ahead of fast failure; and a queue wait far
     * above the default 200 ms, since the queued sends now wait for the stamp as well as the
     * 60 ms, not for a timeout.
     */
    private void slowDisk() throws Exception {
        store.setOsPageCacheBusyTimeOutMills(60);
        broker.setWaitTimeMillsInSendQueue(5000);
        start(1, 8);
        Thread.sleep(1050);
        withPutLockHeld(() -> {
            request(0, SEND, false, 400);
            for (int i = 0; i < 4; i++) {
                request(i % 2, SEND, false, 0);
            }
        });
        await(() -> controller.getMessageStore().isOSPageCacheBusy());
        for (int i = 0; i < 5; i++) {
            request(i % 2, SEND, i == 4, 0);
            Thread.sleep(2);
        }
    }

    /**
     * A put throws inside the lock, then sends come after osPageCacheBusyTimeOutMills: where the
     * exception leaves beginTimeInLock stuck (5.x), the store stays busy and they are refused
     * [REJECTREQUEST]; where {@code finally} resets it (4.9.3-4.9.8) they are served.
     */
    private void faultInsideLock() throws Exception {
        store.setOsPageCacheBusyTimeOutMills(30);
        start(1, 8);
        RemotingCommand failing = send(0, false, 0, true);
        // Busy is counted from the put's beginTimeInLock, not from the dispatch: on a loaded machine
        // the send thread stamped it 41 ms after the dispatch, and the first send below was served.
        // The put's answer is written after its stamp, so the sends come 60 ms after the stamp at least.
        await(() -> answered(failing));
        Thread.sleep(60);
        for (int i = 0; i < 3; i++) {
            request(i % 2, SEND, false, 0);
            Thread.sleep(2);
        }
    }

    /**
     * A pool of two buffers, files of four puts and a slow commit service: a burst of sends
     * lends both buffers out before any file is committed, and the sends that follow are refused
     * [REJECTREQUEST] (isTransientStorePoolDeficient) until a commit gives a buffer back.
     *
     * <p>No send is dispatched while a put may create a file: one dispatched while the send
     * thread created the second file read the pool after the file had borrowed the last buffer and
     * before the agent recorded WorkerCreatesMappedFile, and was refused in a trace no run of the
     * spec explains (4.9.8 at 'full', on a loaded machine). So the burst is dispatched while no
     * put can run, and the refused sends once the burst is answered. The burst waits in the queue
     * for the put lock, so its wait is raised far above the default 200 ms, as in slow-disk.
     */
    private void poolExhaustion() throws Exception {
        store.setTransientStorePoolEnable(true);
        store.setTransientStorePoolSize(2);
        store.setCommitIntervalCommitLog(3000); // no buffer comes back before the refused sends, however slow the machine
        broker.setWaitTimeMillsInSendQueue(5000);
        start(1, 16);
        List<RemotingCommand> burst = new ArrayList<>();
        withPutLockHeld(() -> {
            for (int i = 0; i < 8; i++) {
                burst.add(request(i % 2, SEND, false, 0));
            }
        });
        // Once the burst is answered its two files hold both buffers, and no put runs while the
        // next sends are dispatched. Waiting only for the pool to be empty was not enough: that is
        // true from the second file's borrow, before the agent records the file.
        await(() -> burst.stream().allMatch(this::answered));
        for (int i = 0; i < 4; i++) {
            request(i % 2, SEND, false, 0);
            Thread.sleep(2);
        }
        await(() -> !controller.getMessageStore().isTransientStorePoolDeficient());
        request(0, SEND, false, 0);
    }

    /** Broker code, not a client, submits a task to the send executor between two sends. */
    private void foreignTask() throws Exception {
        start(1, 8);
        request(0, SEND, false, 0);
        controller.getSendMessageExecutor().submit(() -> { }).get();
        request(1, SEND, false, 0);
    }

    /** An operator turns fast failure off while the broker runs (updateBrokerConfig in Apache's). */
    private void configChange() throws Exception {
        start(1, 8);
        request(0, SEND, false, 0);
        broker.setBrokerFastFailureEnable(false);
        request(1, SEND, false, 0);
    }

    /**
     * Runs {@code dispatches} while this thread holds the store's put lock: the send threads wait
     * for it, so no put stamps beginTimeInLock or creates a file meanwhile. No event records this
     * holder; the spec sees the send threads wait longer for the lock.
     */
    private void withPutLockHeld(Dispatches dispatches) throws Exception {
        PutMessageLock lock = controller.getMessageStore().getCommitLog().getPutMessageLock();
        lock.lock();
        try {
            dispatches.run();
        } finally {
            lock.unlock();
        }
    }

    private interface Dispatches {
        void run() throws Exception;
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the stand-in broker never reached the scenario's condition");
            }
            Thread.sleep(1);
        }
    }

    /**
     * The agent's overhead (docs/agent.md): {@code rounds} rounds of {@code requests} admin
     * commands and sends dispatched back to back on two IO threads, served by two send threads
     * and one admin thread; prints each round's time per request after a warm-up round.
     */
    private void throughput(int rounds, int requests) throws Exception {
        broker.setBrokerFastFailureEnable(false);
        start(2, requests);
        for (int round = 0; round <= rounds; round++) {
            int before = client.writes.get();
            long t0 = System.nanoTime();
            List<java.util.concurrent.Future<?>> dispatched = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                RemotingCommand cmd = RemotingCommand.createRequestCommand(i % 2 == 0 ? SEND : GET_BROKER_CONFIG);
                cmd.addExtField("topic", "TopicTest");
                dispatched.add(ioThreads.get(i % 2).submit(() -> controller.getRemotingServer().processRequestCommand(client, cmd)));
            }
            for (java.util.concurrent.Future<?> f : dispatched) {
                f.get();
            }
            while (client.writes.get() < before + requests) {
                Thread.onSpinWait();
            }
            long ns = System.nanoTime() - t0;
            if (round > 0) {
                System.out.println("{\"round\": " + round + ", \"requests\": " + requests + ", \"ns_per_request\": " + ns / requests + "}");
            }
        }
        controller.shutdown();
        for (ExecutorService io : ioThreads) {
            io.shutdown();
        }
    }

    private RemotingCommand request(int ioThread, int code, boolean oneway, long appendMillis) throws Exception {
        return dispatch(ioThread, code, oneway, appendMillis, false);
    }

    private RemotingCommand send(int ioThread, boolean oneway, long appendMillis, boolean failInsideLock) throws Exception {
        return dispatch(ioThread, SEND, oneway, appendMillis, failInsideLock);
    }

    private RemotingCommand dispatch(int ioThread, int code, boolean oneway, long appendMillis, boolean failInsideLock) throws Exception {
        RemotingCommand cmd = RemotingCommand.createRequestCommand(code);
        cmd.addExtField("topic", "TopicTest");
        if (appendMillis > 0) {
            cmd.addExtField("appendMillis", Long.toString(appendMillis));
        }
        if (failInsideLock) {
            cmd.addExtField("failInsideLock", "true");
        }
        if (oneway) {
            cmd.markOnewayRPC();
        }
        sent.add(cmd);
        ChannelHandlerContext ctx = client;
        ioThreads.get(ioThread).submit(() -> controller.getRemotingServer().processRequestCommand(ctx, cmd)).get();
        return cmd;
    }

    /** Waits until every two-way request has its answer and the pools are idle, then stops the broker. */
    private void quiesce() throws Exception {
        long deadline = System.currentTimeMillis() + 10_000;
        while (!unanswered().isEmpty() || busy()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the stand-in broker did not go quiet: no answer to opaques " + unanswered());
            }
            Thread.sleep(5);
        }
        Thread.sleep(30);
        controller.shutdown();
        for (ExecutorService io : ioThreads) {
            io.shutdown();
        }
        Map<String, Integer> tags = new TreeMap<>();
        Map<Integer, Integer> perRequest = new TreeMap<>();
        for (Object o : client.written) {
            RemotingCommand answer = (RemotingCommand) o;
            String remark = answer.getRemark();
            String tag = remark != null && remark.startsWith("[") ? remark.substring(0, remark.indexOf(']') + 1)
                : "code " + answer.getCode();
            tags.merge(tag, 1, Integer::sum);
            perRequest.merge(answer.getOpaque(), 1, Integer::sum);
        }
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Integer> e : tags.entrySet()) {
            b.append(b.length() > 1 ? ", " : "").append('"').append(e.getKey()).append("\": ").append(e.getValue());
        }
        System.out.println(b.append('}'));
        perRequest.values().removeIf(n -> n == 1);
        if (!perRequest.isEmpty()) {
            throw new IllegalStateException("requests answered more than once (opaque=answers): " + perRequest);
        }
    }

    private List<Integer> unanswered() {
        List<Integer> missing = new ArrayList<>();
        for (RemotingCommand c : sent) {
            if (!c.isOnewayRPC() && !answered(c)) {
                missing.add(c.getOpaque());
            }
        }
        return missing;
    }

    /** Whether the client has received an answer to {@code request}. */
    private boolean answered(RemotingCommand request) {
        return client.written.stream().anyMatch(o -> ((RemotingCommand) o).getOpaque() == request.getOpaque());
    }

    private boolean busy() {
        return !controller.getSendThreadPoolQueue().isEmpty() || !controller.getAdminBrokerThreadPoolQueue().isEmpty();
    }
}
