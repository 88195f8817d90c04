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

    static TestGateway start(Path dataDir, Map<GatewayConfig.Option, Object> options) {
        GatewayConfig.Builder b = GatewayConfig.builder()
                .set(GatewayConfig.Option.PORT, 0)
                .set(GatewayConfig.Option.DATA_DIR, dataDir.toString())
                .set(GatewayConfig.Option.DEMO_DELAY_MS, 0)
                .set(GatewayConfig.Option.SHUTDOWN_GRACE_SECONDS, 1);
        options.forEach(b::set);
        GatewayServer s = GatewayServer.builder(b.build()).build();
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
