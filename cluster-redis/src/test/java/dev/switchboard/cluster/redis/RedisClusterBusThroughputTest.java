package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.ClusterBus.Entry;
import dev.switchboard.core.spi.ClusterBus.Lease;
import dev.switchboard.core.spi.ClusterBus.Published;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static dev.switchboard.cluster.redis.RedisTests.get;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Publishes per second through one bus (one pipelined connection), each under its conversation's
 * write lease with the next seq and stored in its conversation's stream, and the CPU it costs the
 * client and Redis. Prints figures, asserts only that every publish was kept. By hand only:
 * {@code ./mvnw -B -ntp -q -pl cluster-redis -am verify -Dnpm.skip=true -Dredis.bench=true
 * -Dtest=RedisClusterBusThroughputTest -Dsurefire.failIfNoSpecifiedTests=false} (optional
 * {@code -Dredis.bench.seconds=10 -Dredis.bench.payload=200 -Dredis.bench.inflight=1000}).
 */
@EnabledIfSystemProperty(named = "redis.bench", matches = "true")
class RedisClusterBusThroughputTest {
    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    static final Duration RUN = Duration.ofSeconds(Integer.getInteger("redis.bench.seconds", 10));
    static final int IN_FLIGHT = Integer.getInteger("redis.bench.inflight", 1_000);
    static final byte[] PAYLOAD = new byte[Integer.getInteger("redis.bench.payload", 200)];

    static {
        Arrays.fill(PAYLOAD, (byte) 'x');
        // The build runs tests with Netty's paranoid leak detection, which records every buffer Lettuce
        // takes; a node runs without it. Netty reads this once, before any of its buffers exists.
        System.setProperty("io.netty.leakDetection.level", System.getProperty("redis.bench.leaks", "disabled"));
    }

    @Test
    void publishesPerSecond() throws Exception {
        System.out.println("Redis " + server.version() + ", " + PAYLOAD.length + "-byte payloads, at most "
                + IN_FLIGHT + " publishes in flight, " + RUN.toSeconds() + " s a case, "
                + Runtime.getRuntime().availableProcessors() + " cores");
        RedisClusterBus publisher = RedisTests.connect(server.url(), "publisher");
        RedisClusterBus subscriber = RedisTests.connect(server.url(), "subscriber");
        try {
            run("warm-up", publisher, conversations(publisher, 1), null);
            run("1 conversation", publisher, conversations(publisher, 1), null);
            run("1,000 conversations", publisher, conversations(publisher, 1_000), null);
            run("1,000 conversations, all subscribed on a second node", publisher,
                    conversations(publisher, 1_000), subscriber);
        } finally {
            get(publisher.close());
            get(subscriber.close());
        }
    }

    /** {@code n} new conversations, each with {@code bus} as its writer. */
    private static List<Lease> conversations(RedisClusterBus bus, int n) {
        return Stream.generate(RedisTests::conversation).limit(n)
                .map(id -> get(bus.acquire(id)).orElseThrow())
                .toList();
    }

    private static void run(String name, RedisClusterBus bus, List<Lease> conversations, RedisClusterBus subscriber)
            throws Exception {
        AtomicLong delivered = new AtomicLong();
        Consumer<Entry> count = e -> delivered.incrementAndGet();
        if (subscriber != null) {
            for (Lease lease : conversations) {
                get(subscriber.subscribe(lease.conversationId(), count));
            }
        }
        long[] seqs = new long[conversations.size()];
        Semaphore window = new Semaphore(IN_FLIGHT);
        AtomicLong published = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long clientCpu = clientCpuNanos();
        long serverCpu = serverCpuTicks();
        long start = System.nanoTime();
        long end = start + RUN.toNanos();
        for (int i = 0; System.nanoTime() < end; i++) {
            window.acquire();
            int c = i % conversations.size();
            bus.publish(conversations.get(c), ++seqs[c], PAYLOAD)
                    .whenComplete((r, e) -> {
                        if (e == null && r == Published.PUBLISHED) {
                            published.incrementAndGet();
                        } else {
                            failed.incrementAndGet();
                        }
                        window.release();
                    });
        }
        window.acquire(IN_FLIGHT);
        double seconds = (System.nanoTime() - start) / 1e9;
        double clientCpuSeconds = (clientCpuNanos() - clientCpu) / 1e9;
        double serverCpuSeconds = (serverCpuTicks() - serverCpu) / 100.0;
        if (subscriber != null) {
            long deadline = System.currentTimeMillis() + 10_000;
            while (delivered.get() < published.get() && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            for (Lease lease : conversations) {
                get(subscriber.unsubscribe(lease.conversationId(), count));
            }
        }
        System.out.printf("%-55s %,9.0f publishes/s  client CPU %5.1f µs/publish (%3.0f%% of a core)"
                        + "  redis CPU %5.1f µs/publish (%3.0f%% of a core)%s%n",
                name, published.get() / seconds, clientCpuSeconds * 1e6 / published.get(),
                100 * clientCpuSeconds / seconds, serverCpuSeconds * 1e6 / published.get(),
                100 * serverCpuSeconds / seconds,
                subscriber == null ? "" : String.format("  delivered %,d of %,d", delivered.get(), published.get()));
        assertThat(failed.get()).isZero();
    }

    private static long clientCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The server's user and system CPU time in clock ticks (100 a second), from /proc. */
    private static long serverCpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(server.pid()), "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }
}
