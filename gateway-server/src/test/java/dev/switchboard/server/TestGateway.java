package dev.switchboard.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** Starts a whole gateway on a free loopback port with a fresh data directory. */
final class TestGateway implements AutoCloseable {
    final GatewayServer server;
    final Path dataDir;

    private TestGateway(GatewayServer server, Path dataDir) {
        this.server = server;
        this.dataDir = dataDir;
    }

    static TestGateway start(Path dataDir, Map<String, Object> options) {
        return start(dataDir, options, null);
    }

    /** A gateway with this runtime instead of the one the options name (null: theirs). */
    static TestGateway start(Path dataDir, Map<String, Object> options,
                             dev.switchboard.core.spi.AgentRuntime runtime) {
        GatewayConfig.Builder b = GatewayConfig.builder()
                .set(GatewayConfig.Option.PORT, 0)
                .set(GatewayConfig.Option.DATA_DIR, dataDir.toString())
                .set("demo-delay-ms", 0)
                .set(GatewayConfig.Option.SHUTDOWN_GRACE_SECONDS, 1);
        options.forEach(b::set);
        GatewayServer.Builder builder = GatewayServer.builder(b.build());
        if (runtime != null) {
            builder.runtime(runtime);
        }
        GatewayServer s = builder.build();
        s.start().join();
        return new TestGateway(s, dataDir);
    }

    static TestGateway start(Path dataDir) {
        return start(dataDir, Map.of());
    }

    int port() {
        return server.port();
    }

    WsClient connect(String path, String... subprotocols) {
        return WsClient.connect(port(), path, subprotocols);
    }

    @Override
    public void close() {
        server.stop(Duration.ofSeconds(1)).join();
    }
}
