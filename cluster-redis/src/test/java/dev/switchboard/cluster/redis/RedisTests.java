package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.ClusterBus;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/** What the bus's tests share: waiting on futures, fresh ids, and a plain connection to look with. */
final class RedisTests {
    private RedisTests() {
    }

    static <T> T get(CompletableFuture<T> future) {
        try {
            return future.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    static RedisClusterBus connect(RedisClusterConfig config) {
        return get(RedisClusterBus.connect(config));
    }

    static RedisClusterBus connect(String url, String nodeId) {
        return connect(RedisClusterConfig.of(url, nodeId));
    }

    static String conversation() {
        return "c-" + UUID.randomUUID();
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static List<Long> seqs(List<ClusterBus.Entry> entries) {
        List<Long> seqs = new ArrayList<>();
        entries.forEach(e -> seqs.add(e.seq()));
        return seqs;
    }

    /** Waits until {@code list} holds {@code size} items, at most 10 s, and checks that it holds no more. */
    static void awaitSize(List<?> list, int size) {
        long deadline = System.currentTimeMillis() + 10_000;
        while (list.size() < size && System.currentTimeMillis() < deadline) {
            sleep(5);
        }
        assertThat(list).hasSize(size);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** A plain connection, to look at keys as Redis holds them; closed with the client. */
    static final class Plain implements AutoCloseable {
        private final RedisClient client;
        final RedisCommands<String, String> redis;

        Plain(String url) {
            client = RedisClient.create(url);
            StatefulRedisConnection<String, String> connection = client.connect();
            redis = connection.sync();
        }

        @Override
        public void close() {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
