package org.apache.rocketmq.remoting.protocol;

/** Stand-in for RemotingSysResponseCode. */
public class RemotingSysResponseCode {
    public static final int SUCCESS = 0;
    public static final int SYSTEM_ERROR = 1;
    public static final int SYSTEM_BUSY = 2;
    public static final int REQUEST_CODE_NOT_SUPPORTED = 3;
}
