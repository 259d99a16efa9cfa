package org.apache.rocketmq.remoting.protocol;

import java.util.HashMap;

/** Stand-in for RemotingCommand: code, opaque, remark, the flag bits and the ext fields. */
public class RemotingCommand {
    private static final int RPC_TYPE = 0; // 0 = request, 1 = response
    private static final int RPC_ONEWAY = 1;
    private static final java.util.concurrent.atomic.AtomicInteger REQUEST_ID = new java.util.concurrent.atomic.AtomicInteger(0);

    private int code;
    private int opaque = REQUEST_ID.getAndIncrement();
    private int flag = 0;
    private String remark;
    private HashMap<String, String> extFields;

    public static RemotingCommand createRequestCommand(int code) {
        RemotingCommand cmd = new RemotingCommand();
        cmd.setCode(code);
        return cmd;
    }

    public static RemotingCommand createResponseCommand(int code, String remark) {
        RemotingCommand cmd = new RemotingCommand();
        cmd.markResponseType();
        cmd.setCode(code);
        cmd.setRemark(remark);
        return cmd;
    }

    public int getCode() {
        return code;
    }

    public void setCode(int code) {
        this.code = code;
    }

    public int getOpaque() {
        return opaque;
    }

    public void setOpaque(int opaque) {
        this.opaque = opaque;
    }

    public String getRemark() {
        return remark;
    }

    public void setRemark(String remark) {
        this.remark = remark;
    }

    public void markResponseType() {
        this.flag |= 1 << RPC_TYPE;
    }

    public boolean isResponseType() {
        return (this.flag & (1 << RPC_TYPE)) == (1 << RPC_TYPE);
    }

    public void markOnewayRPC() {
        this.flag |= 1 << RPC_ONEWAY;
    }

    public boolean isOnewayRPC() {
        return (this.flag & (1 << RPC_ONEWAY)) == (1 << RPC_ONEWAY);
    }

    public HashMap<String, String> getExtFields() {
        return extFields;
    }

    public void addExtField(String key, String value) {
        if (extFields == null) {
            extFields = new HashMap<>();
        }
        extFields.put(key, value);
    }
}
