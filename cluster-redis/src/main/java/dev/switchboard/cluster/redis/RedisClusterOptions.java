package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The options the Redis cluster bus reads, declared as a plugin declares its own. */
public final class RedisClusterOptions {
    static final String URL_FORM = "redis://HOST:PORT[/db]";

    public static final OptionSpec URL = OptionSpec.text("cluster-redis-url", "",
                    "Redis of the cluster's live path, " + URL_FORM + " (rediss:// for TLS); empty: this node runs alone")
            .checkedBy(RedisClusterOptions::urlProblem);
    public static final OptionSpec NODE_ID = OptionSpec.text("node-id", "",
                    "this node's name in write leases, node messages and logs, unique in the cluster; "
                            + "empty: host name and process id")
            .checkedBy(v -> v.length() <= 100 && v.chars().noneMatch(Character::isWhitespace) ? null
                    : "is '" + v + "' but must be at most 100 characters without spaces");
    public static final OptionSpec LEASE_MS = OptionSpec.integer("cluster-lease-ms",
            (int) RedisClusterConfig.DEFAULT_LEASE_TTL.toMillis(), 1_000, 600_000,
            "how long a node stays the writer of a conversation without renewal before another node may take "
                    + "over, in milliseconds");
    public static final OptionSpec STREAM_MAX = OptionSpec.integer("cluster-stream-max",
            RedisClusterConfig.DEFAULT_STREAM_MAX, 1, 10_000_000,
            "events per conversation kept in Redis for resuming on any node; older ones are read from the store");
    public static final OptionSpec HISTORY_SECONDS = OptionSpec.integer("cluster-history-seconds",
            (int) RedisClusterConfig.DEFAULT_HISTORY_TTL.toSeconds(), 1, 30 * 24 * 3600,
            "how long a conversation's recent events and top seq stay in Redis after its last event, in seconds");

    private RedisClusterOptions() {
    }

    public static List<OptionSpec> all() {
        return List.of(URL, NODE_ID, LEASE_MS, STREAM_MAX, HISTORY_SECONDS);
    }

    /** The bus's configuration from checked settings; empty when no Redis is configured. */
    public static Optional<RedisClusterConfig> config(Settings settings) {
        return settings.get(URL.name()).filter(url -> !url.isBlank()).map(url -> new RedisClusterConfig(url,
                settings.get(NODE_ID.name()).filter(id -> !id.isBlank()).orElseGet(RedisClusterOptions::defaultNodeId),
                Duration.ofMillis(integer(settings, LEASE_MS)), integer(settings, STREAM_MAX),
                Duration.ofSeconds(integer(settings, HISTORY_SECONDS)), RedisClusterConfig.DEFAULT_COMMAND_TIMEOUT));
    }

    private static int integer(Settings settings, OptionSpec option) {
        return settings.integer(option.name(), Integer.parseInt(option.defaultValue()));
    }

    /** This host's name, a dash, this process's id. */
    static String defaultNodeId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "node";
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    static String urlProblem(String value) {
        URI uri;
        try {
            uri = new URI(value);
        } catch (URISyntaxException e) {
            return "is '" + value + "' but must be " + URL_FORM;
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        boolean good = ("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme()))
                && uri.getHost() != null && uri.getPort() > 0
                && (path.isEmpty() || path.matches("/\\d{1,5}"))
                && uri.getRawQuery() == null && uri.getRawFragment() == null;
        return good ? null : "is '" + value + "' but must be " + URL_FORM + ", such as redis://127.0.0.1:6379/0";
    }
}
