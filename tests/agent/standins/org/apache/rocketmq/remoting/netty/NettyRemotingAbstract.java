package org.apache.rocketmq.remoting.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import java.util.HashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.Pair;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/**
 * Stand-in for NettyRemotingAbstract (5.3.3): processRequestCommand's dispatch steps (no
 * processor, rejectRequest, RequestTask and submit, RejectedExecutionException) and
 * writeResponse, which drops a oneway request's answer. RPC hooks, metrics and shutdown are left
 * out. Playing 4.9.8 it answers through {@code ctx.writeAndFlush} as 4.9.8 does: the
 * [REJECTREQUEST] and NOT_SUPPORTED answers reach a oneway request too, the others do not.
 */
public abstract class NettyRemotingAbstract {
    protected final HashMap<Integer, Pair<NettyRequestProcessor, ExecutorService>> processorTable = new HashMap<>(64);
    protected Pair<NettyRequestProcessor, ExecutorService> defaultRequestProcessorPair;

    public static void writeResponse(Channel channel, RemotingCommand request, RemotingCommand response) {
        if (response == null) {
            return;
        }
        if (request.isOnewayRPC()) {
            return;
        }
        response.setOpaque(request.getOpaque());
        response.markResponseType();
        channel.writeAndFlush(response);
    }

    public void processRequestCommand(final ChannelHandlerContext ctx, final RemotingCommand cmd) {
        final Pair<NettyRequestProcessor, ExecutorService> matched = this.processorTable.get(cmd.getCode());
        final Pair<NettyRequestProcessor, ExecutorService> pair = null == matched ? this.defaultRequestProcessorPair : matched;
        final int opaque = cmd.getOpaque();

        if (pair == null) {
            String error = " request type " + cmd.getCode() + " not supported";
            final RemotingCommand response =
                RemotingCommand.createResponseCommand(RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED, error);
            response.setOpaque(opaque);
            dispatcherAnswers(ctx, cmd, response);
            return;
        }

        Runnable run = buildProcessRequestHandler(ctx, cmd, pair, opaque);

        if (pair.getObject1().rejectRequest()) {
            final RemotingCommand response = RemotingCommand.createResponseCommand(RemotingSysResponseCode.SYSTEM_BUSY,
                "[REJECTREQUEST]system busy, start flow control for a while");
            response.setOpaque(opaque);
            dispatcherAnswers(ctx, cmd, response);
            return;
        }

        try {
            final RequestTask requestTask = new RequestTask(run, ctx.channel(), cmd);
            pair.getObject2().submit(requestTask);
        } catch (RejectedExecutionException e) {
            final RemotingCommand response = RemotingCommand.createResponseCommand(RemotingSysResponseCode.SYSTEM_BUSY,
                "[OVERLOAD]system busy, start flow control for a while");
            response.setOpaque(opaque);
            writeResponse(ctx.channel(), cmd, response);
        }
    }

    /** The dispatcher's own refusals: 4.0.0-5.0.0 write them even to a oneway request. */
    private static void dispatcherAnswers(ChannelHandlerContext ctx, RemotingCommand cmd, RemotingCommand response) {
        if (MQVersion.STANDIN_4_9_8) {
            ctx.writeAndFlush(response);
        } else {
            writeResponse(ctx.channel(), cmd, response);
        }
    }

    private Runnable buildProcessRequestHandler(ChannelHandlerContext ctx, RemotingCommand cmd,
        Pair<NettyRequestProcessor, ExecutorService> pair, int opaque) {
        return () -> {
            try {
                RemotingCommand response = pair.getObject1().processRequest(ctx, cmd);
                writeResponse(ctx.channel(), cmd, response);
            } catch (Throwable e) {
                if (!cmd.isOnewayRPC()) {
                    RemotingCommand response = RemotingCommand.createResponseCommand(RemotingSysResponseCode.SYSTEM_ERROR,
                        e.toString());
                    response.setOpaque(opaque);
                    writeResponse(ctx.channel(), cmd, response);
                }
            }
        };
    }
}
