package org.apache.rocketmq.remoting.netty;

import java.util.concurrent.ExecutorService;
import org.apache.rocketmq.common.Pair;

/** Stand-in for NettyRemotingServer: the processor table; the scenario's IO threads call processRequestCommand. */
public class NettyRemotingServer extends NettyRemotingAbstract {
    public void registerProcessor(int requestCode, NettyRequestProcessor processor, ExecutorService executor) {
        this.processorTable.put(requestCode, new Pair<>(processor, executor));
    }

    public void registerDefaultProcessor(NettyRequestProcessor processor, ExecutorService executor) {
        this.defaultRequestProcessorPair = new Pair<>(processor, executor);
    }
}
