package org.apache.rocketmq.broker;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.broker.latency.BrokerFastFailure;
import org.apache.rocketmq.broker.processor.AdminBrokerProcessor;
import org.apache.rocketmq.broker.processor.SendMessageProcessor;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.thread.FutureTaskExtThreadPoolExecutor;
import org.apache.rocketmq.remoting.netty.NettyRemotingServer;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * Stand-in for BrokerController (5.3.3): the queues and BrokerFastFailure built in the
 * constructor, the send and admin executors and the processor table in initialize(), fast
 * failure started in start(). The other executors are left out (their queues exist, as
 * BrokerFastFailure scans them).
 */
public class BrokerController {
    private final BrokerConfig brokerConfig;
    private final NettyServerConfig nettyServerConfig;
    private final MessageStoreConfig messageStoreConfig;
    protected final BlockingQueue<Runnable> sendThreadPoolQueue;
    protected final BlockingQueue<Runnable> putThreadPoolQueue;
    protected final BlockingQueue<Runnable> ackThreadPoolQueue;
    protected final BlockingQueue<Runnable> pullThreadPoolQueue;
    protected final BlockingQueue<Runnable> litePullThreadPoolQueue;
    protected final BlockingQueue<Runnable> replyThreadPoolQueue;
    protected final BlockingQueue<Runnable> queryThreadPoolQueue;
    protected final BlockingQueue<Runnable> clientManagerThreadPoolQueue;
    protected final BlockingQueue<Runnable> heartbeatThreadPoolQueue;
    protected final BlockingQueue<Runnable> consumerManagerThreadPoolQueue;
    protected final BlockingQueue<Runnable> endTransactionThreadPoolQueue;
    protected final BlockingQueue<Runnable> adminBrokerThreadPoolQueue;
    protected final BlockingQueue<Runnable> loadBalanceThreadPoolQueue;
    protected BrokerFastFailure brokerFastFailure;
    protected ExecutorService sendMessageExecutor;
    protected ExecutorService adminBrokerExecutor;
    private final DefaultMessageStore messageStore;
    private final NettyRemotingServer remotingServer = new NettyRemotingServer();

    public BrokerController(BrokerConfig brokerConfig, NettyServerConfig nettyServerConfig, MessageStoreConfig messageStoreConfig) {
        this.brokerConfig = brokerConfig;
        this.nettyServerConfig = nettyServerConfig;
        this.messageStoreConfig = messageStoreConfig;
        this.sendThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getSendThreadPoolQueueCapacity());
        this.putThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getPutThreadPoolQueueCapacity());
        this.pullThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getPullThreadPoolQueueCapacity());
        this.litePullThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getLitePullThreadPoolQueueCapacity());
        this.ackThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getAckThreadPoolQueueCapacity());
        this.replyThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getReplyThreadPoolQueueCapacity());
        this.queryThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getQueryThreadPoolQueueCapacity());
        this.clientManagerThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getClientManagerThreadPoolQueueCapacity());
        this.consumerManagerThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getConsumerManagerThreadPoolQueueCapacity());
        this.heartbeatThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getHeartbeatThreadPoolQueueCapacity());
        this.endTransactionThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getEndTransactionPoolQueueCapacity());
        this.adminBrokerThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getAdminBrokerThreadPoolQueueCapacity());
        this.loadBalanceThreadPoolQueue = new LinkedBlockingQueue<>(this.brokerConfig.getLoadBalanceThreadPoolQueueCapacity());
        this.brokerFastFailure = new BrokerFastFailure(this);
        this.messageStore = new DefaultMessageStore(messageStoreConfig);
    }

    public boolean initialize() {
        this.sendMessageExecutor = pool(this.brokerConfig.getSendMessageThreadPoolNums(), this.sendThreadPoolQueue, "SendMessageThread_");
        this.adminBrokerExecutor = pool(this.brokerConfig.getAdminBrokerThreadPoolNums(), this.adminBrokerThreadPoolQueue, "AdminBrokerThread_");
        SendMessageProcessor send = new SendMessageProcessor(this);
        for (int code : new int[] {10, 310, 320, 36}) { // SEND_MESSAGE, _V2, SEND_BATCH_MESSAGE, CONSUMER_SEND_MSG_BACK
            this.remotingServer.registerProcessor(code, send, this.sendMessageExecutor);
        }
        this.remotingServer.registerDefaultProcessor(new AdminBrokerProcessor(), this.adminBrokerExecutor);
        return true;
    }

    private static ExecutorService pool(int threads, BlockingQueue<Runnable> queue, String prefix) {
        AtomicInteger index = new AtomicInteger();
        return new FutureTaskExtThreadPoolExecutor(threads, threads, 1000 * 60, TimeUnit.MILLISECONDS, queue, r -> {
            Thread t = new Thread(r, prefix + index.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public void start() {
        this.messageStore.start();
        this.brokerFastFailure.start();
    }

    public void shutdown() {
        this.brokerFastFailure.shutdown();
        this.sendMessageExecutor.shutdown();
        this.adminBrokerExecutor.shutdown();
    }

    public BrokerConfig getBrokerConfig() { return brokerConfig; }
    public ExecutorService getSendMessageExecutor() { return sendMessageExecutor; }
    public NettyServerConfig getNettyServerConfig() { return nettyServerConfig; }
    public MessageStoreConfig getMessageStoreConfig() { return messageStoreConfig; }
    public DefaultMessageStore getMessageStore() { return messageStore; }
    public NettyRemotingServer getRemotingServer() { return remotingServer; }
    public BlockingQueue<Runnable> getSendThreadPoolQueue() { return sendThreadPoolQueue; }
    public BlockingQueue<Runnable> getPullThreadPoolQueue() { return pullThreadPoolQueue; }
    public BlockingQueue<Runnable> getLitePullThreadPoolQueue() { return litePullThreadPoolQueue; }
    public BlockingQueue<Runnable> getHeartbeatThreadPoolQueue() { return heartbeatThreadPoolQueue; }
    public BlockingQueue<Runnable> getEndTransactionThreadPoolQueue() { return endTransactionThreadPoolQueue; }
    public BlockingQueue<Runnable> getAckThreadPoolQueue() { return ackThreadPoolQueue; }
    public BlockingQueue<Runnable> getAdminBrokerThreadPoolQueue() { return adminBrokerThreadPoolQueue; }
}
