package dev.switchboard.server;

import dev.switchboard.core.spi.AgentRuntime;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A whole gateway for a test class: started on a free loopback port with a fresh data directory
 * before the class's first test, stopped and its directory deleted after the last.
 * <pre>
 * &#64;RegisterExtension
 * static final GatewayExtension gateway = new GatewayExtension();
 * </pre>
 * Options ({@link #GatewayExtension(Map)}) are set by name over the test defaults (port 0, the demo
 * runtime without delay, a one-second shutdown grace).
 */
public final class GatewayExtension implements BeforeAllCallback, AfterAllCallback {
    private final Map<String, Object> options;
    private final AgentRuntime runtime;
    private TestGateway gateway;

    public GatewayExtension() {
        this(Map.of());
    }

    public GatewayExtension(Map<String, Object> options) {
        this(options, null);
    }

    /** A gateway with these options and this runtime instead of the one they name (null: theirs). */
    public GatewayExtension(Map<String, Object> options, AgentRuntime runtime) {
        this.options = Map.copyOf(options);
        this.runtime = runtime;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        gateway = TestGateway.start(Files.createTempDirectory("switchboard-test-"), options, runtime);
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        Path dir = gateway.dataDir;
        gateway.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> {
                try {
                    Files.delete(f);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /** The port the gateway listens on (loopback). */
    public int port() {
        return gateway.port();
    }

    public GatewayServer server() {
        return gateway.server;
    }

    public Path dataDir() {
        return gateway.dataDir;
    }

    WsClient connect(String path, String... subprotocols) {
        return gateway.connect(path, subprotocols);
    }
}
