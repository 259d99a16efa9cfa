package io.netty.channel;

/** Stand-in for Netty's ChannelPromise (never used by the stand-ins but in a signature). */
public interface ChannelPromise {
}
