package io.netty.channel;

/** Stand-in for Netty's ChannelHandlerContext. */
public interface ChannelHandlerContext {
    Channel channel();

    Object writeAndFlush(Object msg);
}
