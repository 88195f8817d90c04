package dev.switchboard.server.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The Netty settings the standalone gateway runs with unless its command line gives them
 * ({@code -Dname=value}): both take a cost from every buffer the event loops allocate and free,
 * and neither is needed to run correctly.
 *
 * <ul>
 *   <li>{@value #LEAK_DETECTION} {@code disabled}: Netty's default samples one buffer in 128 and
 *       records a stack trace for it, and its pipeline touches every message it writes. The test
 *       suite runs with {@code paranoid} (the cluster soak's nodes sample one buffer in 16), which is
 *       where a leak is found; an operator who suspects one in production sets {@code simple} again.</li>
 *   <li>{@value #RECYCLER_CAPACITY} {@code 0}: the objects Netty would pool per thread (the
 *       entries of the outbound buffer and of the allocator's thread cache) are made and collected
 *       instead. Pooling them costs a lock-free queue's offer at every allocation and free, more than
 *       the young collector takes for them.</li>
 * </ul>
 *
 * <p>Both are read when Netty's classes load, so they are set before anything touches Netty.
 * Measured side by side at 1,000 clients in bench/NOTES.md. A gateway embedded with
 * {@code GatewayServer.builder} keeps whatever its host's JVM has.
 */
public final class NettyDefaults {
    static final String LEAK_DETECTION = "io.netty.leakDetection.level";
    static final String RECYCLER_CAPACITY = "io.netty.recycler.maxCapacityPerThread";

    /** Each setting and the value the standalone gateway gives it, in the order they are reported. */
    static final Map<String, String> DEFAULTS = defaults();

    private NettyDefaults() {
    }

    private static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(LEAK_DETECTION, "disabled");
        m.put(RECYCLER_CAPACITY, "0");
        return m;
    }

    /** Sets each default the system properties do not give already. */
    public static void apply() {
        apply(System.getProperties());
    }

    static void apply(Properties properties) {
        DEFAULTS.forEach(properties::putIfAbsent);
    }

    /** The settings in effect, one line for the start-up log: {@code io.netty.leakDetection.level=disabled, …}. */
    public static String describe() {
        return describe(System.getProperties());
    }

    static String describe(Properties properties) {
        StringBuilder line = new StringBuilder();
        for (String name : DEFAULTS.keySet()) {
            String value = properties.getProperty(name);
            line.append(line.isEmpty() ? "" : ", ").append(name).append('=').append(value)
                    .append(DEFAULTS.get(name).equals(value) ? "" : " (given)");
        }
        return line.toString();
    }
}
