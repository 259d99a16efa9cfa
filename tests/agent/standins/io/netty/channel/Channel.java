package io.netty.channel;

/** Stand-in for Netty's Channel: only what the agent's tests touch. */
public interface Channel {
    /** Passes {@code msg} to the pipeline's head context, as Netty's channel does. */
    Object writeAndFlush(Object msg);
}
