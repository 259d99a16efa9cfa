package io.netty.channel;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stand-in for Netty's AbstractChannelHandlerContext, where every write of a channel or a
 * context ends ({@code writeAndFlush(Object, ChannelPromise)}); this one keeps what is written.
 */
public abstract class AbstractChannelHandlerContext implements ChannelHandlerContext {
    /** Everything written through this context, in order: the client's view of the answers. */
    public final Queue<Object> written = new ConcurrentLinkedQueue<>();
    /** How many messages were written (the queue's size() walks it). */
    public final AtomicInteger writes = new AtomicInteger();

    @Override
    public Object writeAndFlush(Object msg) {
        return writeAndFlush(msg, null);
    }

    public Object writeAndFlush(Object msg, ChannelPromise promise) {
        written.add(msg);
        writes.incrementAndGet();
        return null;
    }
}
