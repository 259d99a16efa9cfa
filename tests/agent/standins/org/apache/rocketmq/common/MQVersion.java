package org.apache.rocketmq.common;

/**
 * Stand-in for MQVersion: the release the stand-ins claim to be, 5.3.3 unless the system
 * property {@code standin.release} says {@code V4_9_8}; the other stand-ins then behave as 4.9.8
 * where the agent sees a difference.
 */
public class MQVersion {
    public static final int CURRENT_VERSION = Version.valueOf(System.getProperty("standin.release", "V5_3_3")).ordinal();
    /** Stand-ins only: whether they play 4.9.8. */
    public static final boolean STANDIN_4_9_8 = CURRENT_VERSION == Version.V4_9_8.ordinal();

    public static String getVersionDesc(int value) {
        return Version.values()[value].name();
    }

    public enum Version {
        V4_9_8,
        V5_3_3,
    }
}
