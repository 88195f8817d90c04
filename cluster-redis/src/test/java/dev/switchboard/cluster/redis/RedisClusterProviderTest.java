package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ClusterProvider;
import dev.switchboard.core.spi.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

import static dev.switchboard.cluster.redis.RedisTests.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisClusterProviderTest {
    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    final RedisClusterProvider provider = new RedisClusterProvider();

    private static Settings settings(Map<String, String> given) {
        return key -> Optional.ofNullable(given.get(key));
    }

    @Test
    void theProviderIsFoundAsTheRedisClusterWithItsOptions() {
        ClusterProvider found = ServiceLoader.load(ClusterProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis"))
                .findFirst().orElseThrow();

        assertThat(found).isInstanceOf(RedisClusterProvider.class);
        assertThat(found.options()).isEqualTo(RedisClusterOptions.all());
    }

    @Test
    void itIsConfiguredByARedisUrlAlone() {
        assertThat(provider.configured(settings(Map.of("cluster-redis-url", "redis://cache:6379")))).isTrue();
        assertThat(provider.configured(settings(Map.of("node-id", "gw-1")))).isFalse();
        assertThat(provider.configured(settings(Map.of("cluster-redis-url", "")))).isFalse();
        assertThat(provider.configured(settings(Map.of("cluster-redis-url", " ")))).isFalse();
    }

    @Test
    void itConnectsAsTheNodeTheSettingsNameWithTheirLeaseTime() throws Exception {
        ClusterBus bus = provider.connect(settings(Map.of("cluster-redis-url", server.url(), "node-id", "gw-7",
                "cluster-lease-ms", "2500")));
        try {
            assertThat(bus.nodeId()).isEqualTo("gw-7");
            assertThat(bus.leaseTtl()).isEqualTo(Duration.ofMillis(2_500));
            assertThat(get(bus.problem(Duration.ofSeconds(1)))).isNull();
        } finally {
            get(bus.close());
        }
    }

    @Test
    void aRedisThatCannotBeReachedFailsWithOneLineNamingItsAddressAndWhy() throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Settings closedPort = settings(Map.of("cluster-redis-url", "redis://:secret@127.0.0.1:" + port));

        assertThatThrownBy(() -> provider.connect(closedPort))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("cannot connect to Redis at 127.0.0.1:" + port + ": ")
                .hasMessageContainingAll("refused")
                .hasMessageNotContaining("secret")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
}
