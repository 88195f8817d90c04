package dev.switchboard.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.List;

/** Command-line entry point: parses the configuration, starts the gateway, stops it on SIGTERM/SIGINT. */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    private Main() {
    }

    public static void main(String[] args) {
        List<String> list = Arrays.asList(args);
        if (list.contains("--help") || list.contains("-h")) {
            System.out.print(GatewayConfig.help());
            return;
        }
        GatewayServer server;
        try {
            GatewayConfig config = GatewayConfig.parse(args, System.getenv());
            server = GatewayServer.builder(config).build();
            server.start().join();
        } catch (GatewayConfig.ConfigException e) {
            System.err.println("switchboard: " + e.getMessage());
            System.exit(2);
            return;
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            log.error("start-up failed: {}", cause.getMessage(), cause);
            System.err.println("switchboard: start-up failed: " + cause.getMessage());
            System.exit(1);
            return;
        }
        GatewayServer running = server;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> running.stop().join(), "switchboard-shutdown"));
    }
}
