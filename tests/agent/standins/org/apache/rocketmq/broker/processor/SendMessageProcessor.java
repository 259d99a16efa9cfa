package org.apache.rocketmq.broker.processor;

import io.netty.channel.ChannelHandlerContext;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.remoting.netty.NettyRequestProcessor;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.apache.rocketmq.store.PutMessageStatus;

/** Stand-in for SendMessageProcessor (5.3.3, and 4.9.8's [PC_SYNCHRONIZED] code): rejectRequest, the put, handlePutMessageResult's two answers. */
public class SendMessageProcessor implements NettyRequestProcessor {
    private final BrokerController brokerController;

    public SendMessageProcessor(BrokerController brokerController) {
        this.brokerController = brokerController;
    }

    @Override
    public RemotingCommand processRequest(ChannelHandlerContext ctx, RemotingCommand request) {
        String topic = request.getExtFields() == null ? "" : request.getExtFields().getOrDefault("topic", "");
        String slow = request.getExtFields() == null ? null : request.getExtFields().get("appendMillis");
        boolean fail = request.getExtFields() != null && request.getExtFields().containsKey("failInsideLock");
        MessageExtBrokerInner msg = new MessageExtBrokerInner(topic, slow == null ? 0 : Long.parseLong(slow), fail);
        PutMessageStatus status = this.brokerController.getMessageStore().asyncPutMessage(msg).join();
        RemotingCommand response = RemotingCommand.createResponseCommand(RemotingSysResponseCode.SUCCESS, null);
        if (status == PutMessageStatus.OS_PAGE_CACHE_BUSY) {
            // SYSTEM_ERROR up to 5.2.0, SYSTEM_BUSY from 5.3.0
            response.setCode(MQVersion.STANDIN_4_9_8 ? RemotingSysResponseCode.SYSTEM_ERROR : RemotingSysResponseCode.SYSTEM_BUSY);
            response.setRemark("[PC_SYNCHRONIZED]broker busy, start flow control for a while");
        }
        return response;
    }

    @Override
    public boolean rejectRequest() {
        return this.brokerController.getMessageStore().isOSPageCacheBusy()
            || this.brokerController.getMessageStore().isTransientStorePoolDeficient();
    }
}
