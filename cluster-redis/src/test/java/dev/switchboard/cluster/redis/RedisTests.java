package dev.switchboard.cluster.redis;

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

/** What the broker's tests share: waiting on futures, fresh ids, and a plain connection to look with. */
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

    static RedisBroker connect(RedisBrokerConfig config) {
        return get(RedisBroker.connect(config));
    }

    static RedisBroker connect(String url) {
        return connect(RedisBrokerConfig.of(url, "test-node"));
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

    static List<Long> seqs(List<RedisEntry> entries) {
        List<Long> seqs = new ArrayList<>();
        entries.forEach(e -> seqs.add(e.seq()));
        return seqs;
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
