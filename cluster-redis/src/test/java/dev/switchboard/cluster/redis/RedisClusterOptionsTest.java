package dev.switchboard.cluster.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class RedisClusterOptionsTest {
    @ParameterizedTest
    @ValueSource(strings = {"redis://127.0.0.1:6379", "redis://redis.internal:6380/2", "rediss://cache:6379/0",
            "redis://:secret@cache:6379"})
    void aRedisUrlWithHostAndPortIsAccepted(String url) {
        assertThat(RedisClusterOptions.URL.problem(url)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1:6379", "http://cache:6379", "redis://cache", "redis://:6379",
            "redis://cache:6379/db", "redis://cache:6379/0?timeout=1", "redis://cache:6379/0/1", "not a url"})
    void anythingElseIsRefusedWithTheExpectedForm(String url) {
        assertThat(RedisClusterOptions.URL.problem(url)).contains("'" + url + "'").contains("redis://HOST:PORT[/db]");
    }

    @Test
    void aNodeIdIsOneWordAndDefaultsToHostAndPid() {
        assertThat(RedisClusterOptions.NODE_ID.problem("gw-1")).isNull();
        assertThat(RedisClusterOptions.NODE_ID.problem("gw 1")).contains("without spaces");
        assertThat(RedisClusterOptions.defaultNodeId()).endsWith("-" + ProcessHandle.current().pid());
    }

    @Test
    void theBusConfigComesFromTheSettingsWithTheDeclaredDefaults() {
        Map<String, String> given = Map.of("cluster-redis-url", "redis://cache:6379/1", "node-id", "gw-1");
        RedisClusterConfig config = RedisClusterOptions.config(key -> Optional.ofNullable(given.get(key)))
                .orElseThrow();

        assertThat(config).isEqualTo(new RedisClusterConfig("redis://cache:6379/1", "gw-1", Duration.ofMillis(15_000),
                10_000, Duration.ofHours(1), RedisClusterConfig.DEFAULT_COMMAND_TIMEOUT));
        assertThat(config.address()).isEqualTo("cache:6379");
        assertThat(RedisClusterOptions.config(key -> Optional.empty())).isEmpty();
    }

    @Test
    void givenOptionsOverrideTheDefaultsAndAnEmptyNodeIdMeansHostAndPid() {
        Map<String, String> given = Map.of("cluster-redis-url", "redis://:secret@cache:6379", "node-id", "",
                "cluster-lease-ms", "3000", "cluster-stream-max", "50", "cluster-history-seconds", "60");
        RedisClusterConfig config = RedisClusterOptions.config(key -> Optional.ofNullable(given.get(key)))
                .orElseThrow();

        assertThat(config.nodeId()).isEqualTo(RedisClusterOptions.defaultNodeId());
        assertThat(config.leaseTtl()).isEqualTo(Duration.ofSeconds(3));
        assertThat(config.streamMax()).isEqualTo(50);
        assertThat(config.historyTtl()).isEqualTo(Duration.ofMinutes(1));
        assertThat(config.address()).isEqualTo("cache:6379");
    }
}
