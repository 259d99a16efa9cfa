package org.apache.rocketmq.broker.latency;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.Pair;
import org.apache.rocketmq.common.future.FutureTaskExt;
import org.apache.rocketmq.remoting.netty.RequestTask;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/**
 * Stand-in for BrokerFastFailure (5.3.3): every 10 ms after 1 s, phase 1 drains the send queue
 * while the store is busy, phase 2 cleans each listed queue's expired heads. The queue list is
 * built in the constructor, from BrokerController's queues, as in 5.3.0+.
 *
 * <p>Planted bug for the tests: the system property {@code standin.planted.clean_early_ms}
 * makes phase 2 clean a head that many milliseconds before its wait is over.
 */
public class BrokerFastFailure {
    private final ScheduledExecutorService scheduledExecutorService;
    private final BrokerController brokerController;
    private final List<Pair<BlockingQueue<Runnable>, Supplier<Long>>> cleanExpiredRequestQueueList = new ArrayList<>();
    private final long plantedCleanEarlyMillis = Long.getLong("standin.planted.clean_early_ms", 0);

    public BrokerFastFailure(final BrokerController brokerController) {
        this.brokerController = brokerController;
        initCleanExpiredRequestQueueList();
        this.scheduledExecutorService = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "BrokerFastFailureScheduledThread1");
            t.setDaemon(true);
            return t;
        });
    }

    /** 5.3.0+: the seven queues, in this order; 4.3.1-4.9.8 clean send, pull, heartbeat, endTransaction. */
    private void initCleanExpiredRequestQueueList() {
        BrokerController b = this.brokerController;
        cleanExpiredRequestQueueList.add(new Pair<>(b.getSendThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInSendQueue()));
        cleanExpiredRequestQueueList.add(new Pair<>(b.getPullThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInPullQueue()));
        if (!MQVersion.STANDIN_4_9_8) {
            cleanExpiredRequestQueueList.add(new Pair<>(b.getLitePullThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInLitePullQueue()));
        }
        cleanExpiredRequestQueueList.add(new Pair<>(b.getHeartbeatThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInHeartbeatQueue()));
        cleanExpiredRequestQueueList.add(new Pair<>(b.getEndTransactionThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInTransactionQueue()));
        if (MQVersion.STANDIN_4_9_8) {
            return;
        }
        cleanExpiredRequestQueueList.add(new Pair<>(b.getAckThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInAckQueue()));
        cleanExpiredRequestQueueList.add(new Pair<>(b.getAdminBrokerThreadPoolQueue(), () -> b.getBrokerConfig().getWaitTimeMillsInAdminBrokerQueue()));
    }

    public static RequestTask castRunnable(final Runnable runnable) {
        try {
            if (runnable instanceof FutureTaskExt) {
                FutureTaskExt<?> object = (FutureTaskExt<?>) runnable;
                return (RequestTask) object.getRunnable();
            }
        } catch (Throwable e) {
            // a foreign task: not a request
        }
        return null;
    }

    public void start() {
        this.scheduledExecutorService.scheduleAtFixedRate(() -> {
            if (brokerController.getBrokerConfig().isBrokerFastFailureEnable()) {
                cleanExpiredRequest();
            }
        }, 1000, 10, TimeUnit.MILLISECONDS);
    }

    private void cleanExpiredRequest() {
        while (this.brokerController.getMessageStore().isOSPageCacheBusy()) {
            try {
                if (!this.brokerController.getSendThreadPoolQueue().isEmpty()) {
                    final Runnable runnable = this.brokerController.getSendThreadPoolQueue().poll(0, TimeUnit.SECONDS);
                    if (null == runnable) {
                        break;
                    }
                    final RequestTask rt = castRunnable(runnable);
                    if (rt != null) {
                        rt.returnResponse(RemotingSysResponseCode.SYSTEM_BUSY, String.format(
                            "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %sms, "
                                + "size of queue: %d",
                            System.currentTimeMillis() - rt.getCreateTimestamp(),
                            this.brokerController.getSendThreadPoolQueue().size()));
                    }
                } else {
                    break;
                }
            } catch (Throwable ignored) {
                // as in the broker: one bad element does not stop the run
            }
        }

        for (Pair<BlockingQueue<Runnable>, Supplier<Long>> pair : cleanExpiredRequestQueueList) {
            cleanExpiredRequestInQueue(pair.getObject1(), pair.getObject2().get());
        }
    }

    void cleanExpiredRequestInQueue(final BlockingQueue<Runnable> blockingQueue, final long maxWaitTimeMillsInQueue) {
        while (true) {
            try {
                if (!blockingQueue.isEmpty()) {
                    final Runnable runnable = blockingQueue.peek();
                    if (null == runnable) {
                        break;
                    }
                    final RequestTask rt = castRunnable(runnable);
                    if (rt == null || rt.isStopRun()) {
                        break;
                    }

                    final long behind = System.currentTimeMillis() - rt.getCreateTimestamp();
                    if (behind + plantedCleanEarlyMillis >= maxWaitTimeMillsInQueue) {
                        if (blockingQueue.remove(runnable)) {
                            rt.setStopRun(true);
                            rt.returnResponse(RemotingSysResponseCode.SYSTEM_BUSY, String.format("[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %sms, size of queue: %d", behind, blockingQueue.size()));
                        }
                    } else {
                        break;
                    }
                } else {
                    break;
                }
            } catch (Throwable ignored) {
                // as in the broker
            }
        }
    }

    public void shutdown() {
        this.scheduledExecutorService.shutdown();
    }
}
