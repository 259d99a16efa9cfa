package org.apache.rocketmq.common;

/** Stand-in for MQVersion: the release the stand-ins claim to be. */
public class MQVersion {
    public static final int CURRENT_VERSION = Version.V5_3_3.ordinal();

    public static String getVersionDesc(int value) {
        return Version.values()[value].name();
    }

    public enum Version {
        V4_9_8,
        V5_3_3,
    }
}
