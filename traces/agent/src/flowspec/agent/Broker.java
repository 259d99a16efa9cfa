package flowspec.agent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;

/**
 * What the agent reads from a BrokerController by field and getter name (4.9.x and 5.x spell
 * them alike): the executors' queues and pools, and the configuration of the trace header
 * (docs/trace-format.md, "The header").
 */
final class Broker {
    /** Spec executor name -> BrokerController's executor field and queue field. */
    private static final Map<String, String[]> FIELDS = new LinkedHashMap<>();

    static {
        FIELDS.put("send", new String[] {"sendMessageExecutor", "sendThreadPoolQueue"});
        FIELDS.put("pull", new String[] {"pullMessageExecutor", "pullThreadPoolQueue"});
        FIELDS.put("litePull", new String[] {"litePullMessageExecutor", "litePullThreadPoolQueue"});
        FIELDS.put("heartbeat", new String[] {"heartbeatExecutor", "heartbeatThreadPoolQueue"});
        FIELDS.put("endTransaction", new String[] {"endTransactionExecutor", "endTransactionThreadPoolQueue"});
        FIELDS.put("ack", new String[] {"ackMessageExecutor", "ackThreadPoolQueue"});
        FIELDS.put("query", new String[] {"queryMessageExecutor", "queryThreadPoolQueue"});
        FIELDS.put("clientManage", new String[] {"clientManageExecutor", "clientManagerThreadPoolQueue"});
        FIELDS.put("consumerManage", new String[] {"consumerManageExecutor", "consumerManagerThreadPoolQueue"});
        FIELDS.put("reply", new String[] {"replyMessageExecutor", "replyThreadPoolQueue"});
        FIELDS.put("loadBalance", new String[] {"loadBalanceExecutor", "loadBalanceThreadPoolQueue"});
        FIELDS.put("admin", new String[] {"adminBrokerExecutor", "adminBrokerThreadPoolQueue"});
    }

    /**
     * The queues BrokerFastFailure cleans, in its order, with BrokerConfig's getter of each
     * wait (spec.releases.CLEANED_QUEUES): 4.3.1-4.9.x the first four, 5.0.0+ six, 5.3.0+ seven.
     */
    private static final String[][] CLEANED = {
        {"send", "getWaitTimeMillsInSendQueue"}, {"pull", "getWaitTimeMillsInPullQueue"},
        {"litePull", "getWaitTimeMillsInLitePullQueue"}, {"heartbeat", "getWaitTimeMillsInHeartbeatQueue"},
        {"endTransaction", "getWaitTimeMillsInTransactionQueue"}, {"ack", "getWaitTimeMillsInAckQueue"},
        {"admin", "getWaitTimeMillsInAdminBrokerQueue"},
    };
    private static final List<String> CLEANED_4_9 = Arrays.asList("send", "pull", "heartbeat", "endTransaction");

    private Broker() {
    }

    /** Puts a RecordingQueue of the same capacity in place of each executor queue (still empty). */
    static void replaceQueues(Object controller, Options options) {
        for (Map.Entry<String, String[]> f : FIELDS.entrySet()) {
            String field = f.getValue()[1];
            if (!Reflect.hasField(controller, field)) {
                continue;
            }
            Object q = Reflect.get(controller, field);
            if (q instanceof BlockingQueue && !(q instanceof RecordingQueue)) {
                BlockingQueue<?> old = (BlockingQueue<?>) q;
                int capacity = old.remainingCapacity() + old.size();
                Reflect.set(controller, field, new RecordingQueue(f.getKey(), capacity, options.executors.contains(f.getKey())));
            }
        }
    }

    /** Executor object -> spec name, for the modeled executors whose queue the agent records. */
    static Map<Object, String> executors(Object controller, Options options) {
        Map<Object, String> found = new IdentityHashMap<>();
        for (Map.Entry<String, String[]> f : FIELDS.entrySet()) {
            Object executor = modeled(controller, options, f.getKey());
            if (executor != null) {
                found.put(executor, f.getKey());
            }
        }
        return found;
    }

    /** The executor of {@code name} if the trace models it: present, recorded queue, in the option. */
    private static Object modeled(Object controller, Options options, String name) {
        String[] f = FIELDS.get(name);
        if (!options.executors.contains(name) || !Reflect.hasField(controller, f[0]) || !Reflect.hasField(controller, f[1])) {
            return null;
        }
        Object executor = Reflect.get(controller, f[0]);
        Object queue = Reflect.get(controller, f[1]);
        return executor != null && queue instanceof RecordingQueue ? executor : null;
    }

    /** The spec name of the executor processRequestCommand routes {@code command} to. */
    static String executorOf(Object handler, Object command, Map<Object, String> executors) {
        Map<?, ?> table = (Map<?, ?>) Reflect.get(handler, "processorTable");
        Object pair = table.get(Reflect.getInt(command, "getCode"));
        if (pair == null) {
            pair = Reflect.get(handler, Reflect.hasField(handler, "defaultRequestProcessorPair")
                ? "defaultRequestProcessorPair" : "defaultRequestProcessor");
        }
        String name = executors.get(Reflect.call(pair, "getObject2"));
        if (name == null) {
            throw new IllegalStateException("request code " + Reflect.getInt(command, "getCode")
                + " goes to an executor the trace does not model");
        }
        return name;
    }

    /** The release the broker says it is: MQVersion.getVersionDesc(CURRENT_VERSION), "V5_3_3" -> "5.3.3". */
    static String release(Object controller) throws ReflectiveOperationException {
        Class<?> v = Class.forName("org.apache.rocketmq.common.MQVersion", true, controller.getClass().getClassLoader());
        int current = v.getField("CURRENT_VERSION").getInt(null);
        String desc = (String) v.getMethod("getVersionDesc", int.class).invoke(null, current);
        return desc.replaceFirst("^V", "").replace('_', '.').replaceFirst("\\.SNAPSHOT$", "");
    }

    /** The header's io_threads: the option, else NettyServerConfig.serverWorkerThreads. */
    static int ioThreads(Object controller, Options options) {
        return options.ioThreads > 0 ? options.ioThreads
            : Reflect.getInt(Reflect.call(controller, "getNettyServerConfig"), "getServerWorkerThreads");
    }

    /**
     * The header's environment: what the broker's surroundings may do that a trace below full does
     * not show (docs/trace-format.md, "The header"). Any release may throw inside the put lock; a
     * slave's HA service appends replicated data under the same lock without stamping
     * beginTimeInLock (CommitLog.appendData); and broker code submitted {@code foreign} tasks
     * (executor -> how many), as the recording saw them. The limiter is in no release. Operator
     * changes are not recorded: the recorder marks a trace whose configuration changed instead.
     */
    static String environment(Object controller, Map<String, Integer> foreign) {
        Object store = Reflect.call(controller, "getMessageStoreConfig");
        boolean slave = "SLAVE".equals(String.valueOf(Reflect.call(store, "getBrokerRole")));
        StringBuilder b = new StringBuilder("{\"exceptions_in_lock\":true,\"ha_appends\":").append(slave);
        if (!foreign.isEmpty()) {
            b.append(",\"foreign_tasks\":[");
            int tasks = 0;
            for (Map.Entry<String, Integer> f : foreign.entrySet()) {
                b.append(tasks == 0 ? "" : ",");
                Event.string(b, f.getKey());
                tasks += f.getValue();
            }
            b.append("],\"max_foreign_tasks\":").append(tasks);
        }
        return b.append('}').toString();
    }

    /** The header record (JSON, without environment and recording_incomplete, which the recorder adds at the end). */
    static String header(Object controller, Options options, long start) throws ReflectiveOperationException {
        String release = release(controller);
        String profile = options.profile != null ? options.profile : release;
        Object broker = Reflect.call(controller, "getBrokerConfig");
        Object store = Reflect.call(controller, "getMessageStoreConfig");
        int io = ioThreads(controller, options);
        StringBuilder b = new StringBuilder(1024);
        b.append("{\"trace_id\":");
        Event.string(b, options.traceId);
        b.append(",\"seq\":0,\"ts\":").append(start).append(",\"kind\":\"TraceHeader\",\"format_version\":\"1\"");
        b.append(",\"implementation\":\"apache-rocketmq-broker\",\"implementation_version\":");
        Event.string(b, release);
        b.append(",\"profile\":");
        Event.string(b, profile);
        b.append(",\"observation\":");
        Event.string(b, options.level);
        b.append(",\"config\":{\"processors\":").append(Runtime.getRuntime().availableProcessors());
        b.append(",\"io_threads\":").append(io).append(",\"executors\":[");
        List<String> listed = new ArrayList<>();
        for (Map.Entry<String, String[]> f : FIELDS.entrySet()) {
            Object executor = modeled(controller, options, f.getKey());
            if (executor == null) {
                continue;
            }
            BlockingQueue<?> q = (BlockingQueue<?>) Reflect.get(controller, f.getValue()[1]);
            b.append(listed.isEmpty() ? "" : ",").append("{\"name\":\"").append(f.getKey()).append("\",\"threads\":")
                .append(Hooks.threads(executor)).append(",\"capacity\":").append(q.remainingCapacity() + q.size()).append('}');
            listed.add(f.getKey());
        }
        b.append("],\"queue_waits\":{");
        boolean first = true;
        boolean fourNine = profile.startsWith("4.");
        boolean admin = !fourNine && profile.compareTo("5.3.0") >= 0;
        for (String[] c : CLEANED) {
            boolean cleaned = fourNine ? CLEANED_4_9.contains(c[0]) : !c[0].equals("admin") || admin;
            if (cleaned && listed.contains(c[0])) {
                b.append(first ? "" : ",").append('"').append(c[0]).append("\":").append(Reflect.getLong(broker, c[1]));
                first = false;
            }
        }
        long mappedFile = Reflect.getLong(store, "getMappedFileSizeCommitLog");
        long puts = options.mappedFilePuts > 0 ? options.mappedFilePuts : Math.max(1, mappedFile / options.messageBytes);
        b.append("},\"os_page_cache_busy_timeout_ms\":").append(Reflect.getLong(store, "getOsPageCacheBusyTimeOutMills"));
        b.append(",\"fast_failure_enable\":").append(Reflect.getBool(broker, "isBrokerFastFailureEnable"));
        b.append(",\"transient_store_pool_enable\":").append(Reflect.getBool(store, "isTransientStorePoolEnable"));
        b.append(",\"transient_store_pool_size\":").append(Reflect.getInt(store, "getTransientStorePoolSize"));
        b.append(",\"mapped_file_size\":").append(Math.min(puts, Integer.MAX_VALUE));
        b.append(",\"flush_disk_type\":");
        Event.string(b, String.valueOf(Reflect.call(store, "getFlushDiskType")));
        // AdminBrokerProcessor is the default processor in every release; source 004's limiter is in none.
        b.append(",\"default_processor_registered\":true");
        b.append(",\"rate_limit\":{\"enabled\":false,\"default_qps\":2000.0,\"send_msg_back_qps\":100.0,\"circuit_breaker_open_micros\":1000000}");
        // BrokerFastFailure.start: scheduleAtFixedRate(..., 1000, 10, TimeUnit.MILLISECONDS), constants in Java.
        b.append(",\"start_time_ms\":").append(start);
        b.append(",\"fast_failure_initial_delay_ms\":1000,\"fast_failure_period_ms\":10}}");
        return b.toString();
    }
}
