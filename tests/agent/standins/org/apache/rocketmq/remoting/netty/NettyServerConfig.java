package org.apache.rocketmq.remoting.netty;

/** Stand-in for NettyServerConfig: the threads that run processRequestCommand. */
public class NettyServerConfig {
    private int serverWorkerThreads = 8;

    public int getServerWorkerThreads() { return serverWorkerThreads; }
    public void setServerWorkerThreads(int v) { serverWorkerThreads = v; }
}
