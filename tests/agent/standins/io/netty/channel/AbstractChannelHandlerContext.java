package io.netty.channel;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Stand-in for Netty's AbstractChannelHandlerContext, where every write of a channel or a
 * context ends ({@code writeAndFlush(Object, ChannelPromise)}); this one keeps what is written.
 */
public abstract class AbstractChannelHandlerContext implements ChannelHandlerContext {
    /** Everything written through this context, in order: the client's view of the answers. */
    public final List<Object> written = new CopyOnWriteArrayList<>();

    @Override
    public Object writeAndFlush(Object msg) {
        return writeAndFlush(msg, null);
    }

    public Object writeAndFlush(Object msg, ChannelPromise promise) {
        written.add(msg);
        return null;
    }
}
