package dev.switchboard.server;

import dev.switchboard.server.internal.LogSetup;
import dev.switchboard.server.internal.NettyDefaults;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletionException;

/**
 * Command-line entry point: parses the configuration, starts the gateway, stops it on SIGTERM/SIGINT.
 * A mistake in the configuration exits with 2, anything else that stops start-up with 1; either is
 * one line on standard error, with a stack trace only for what the operator cannot fix.
 */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    private Main() {
    }

    public static void main(String[] args) {
        // Before any class of Netty loads: it reads these once.
        NettyDefaults.apply();
        List<String> list = Arrays.asList(args);
        if (list.contains("--help") || list.contains("-h")) {
            Plugins plugins;
            try {
                plugins = Plugins.load(GatewayConfig.pluginDir(args, System.getenv()));
            } catch (RuntimeException e) {
                System.err.println("switchboard: " + e.getMessage() + " (the options of the built-in modules follow)");
                plugins = Plugins.builtIn();
            }
            System.out.print(GatewayConfig.help(plugins));
            return;
        }
        if (list.contains("--version")) {
            System.out.println("switchboard " + version());
            return;
        }
        GatewayServer server;
        try {
            // Logging is set up before the plugins load, so that what they log is in the chosen format too.
            GatewayConfig host = GatewayConfig.hostOptions(args, System.getenv());
            LogSetup.apply(host.isGiven(GatewayConfig.Option.LOG_LEVEL) ? host.logLevel() : null, host.logFormat());
            GatewayConfig config = GatewayConfig.parse(args, System.getenv());
            config.warnings().forEach(log::warn);
            log.info("netty: {}", NettyDefaults.describe());
            server = GatewayServer.builder(config).build();
            server.start().join();
        } catch (RuntimeException e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof GatewayConfig.ConfigException) {
                System.err.println("switchboard: " + cause.getMessage());
                System.exit(2);
            } else if (cause instanceof StartupException) {
                System.err.println("switchboard: " + cause.getMessage());
                System.exit(1);
            } else {
                log.error("start-up failed", cause);
                System.err.println("switchboard: start-up failed: " + cause);
                System.exit(1);
            }
            return;
        }
        GatewayServer running = server;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> running.stop().join(), "switchboard-shutdown"));
    }

    /** The release, as the build wrote it. */
    static String version() {
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
