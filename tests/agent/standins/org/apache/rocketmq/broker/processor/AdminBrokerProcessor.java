package org.apache.rocketmq.broker.processor;

import io.netty.channel.ChannelHandlerContext;
import org.apache.rocketmq.remoting.netty.NettyRequestProcessor;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/** Stand-in for AdminBrokerProcessor, the default processor: answers every command SUCCESS. */
public class AdminBrokerProcessor implements NettyRequestProcessor {
    @Override
    public RemotingCommand processRequest(ChannelHandlerContext ctx, RemotingCommand request) {
        return RemotingCommand.createResponseCommand(RemotingSysResponseCode.SUCCESS, null);
    }

    @Override
    public boolean rejectRequest() {
        return false;
    }
}
