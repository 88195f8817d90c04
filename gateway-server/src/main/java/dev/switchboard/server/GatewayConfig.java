package dev.switchboard.server;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The gateway's configuration. Each option is a command-line flag {@code --name}, an
 * environment variable {@code SWITCHBOARD_NAME} and a key of the JSON config file
 * ({@code --config FILE}); precedence is defaults &lt; file &lt; environment &lt; flags.
 * A bad value stops start-up with a {@link ConfigException} naming the option and what it accepts.
 */
public final class GatewayConfig {

    /** Every option, with its default and its limits. */
    public enum Option {
        HOST("host", "127.0.0.1", "address to listen on", Kind.TEXT, 0, 0),
        LOG_LEVEL("log-level", "info", "how much the gateway logs", "trace", "debug", "info", "warn", "error"),
        PORT("port", "8000", "TCP port; 0 picks a free one", Kind.INT, 0, 65_535),
        DATA_DIR("data-dir", "./data", "directory of the SQLite history file", Kind.TEXT, 0, 0),
        RUNTIME("runtime", "demo", "agent runtime: the id of an installed runtime module", Kind.TEXT, 0, 0),
        DEMO_DELAY_MS("demo-delay-ms", "30", "demo runtime's pause between streamed chunks in ms; 0 = none",
                Kind.INT, 0, 60_000),
        MAX_FRAME_BYTES("max-frame-bytes", "65536", "largest inbound WebSocket message in bytes",
                Kind.INT, 1_024, 16 * 1024 * 1024),
        MAX_BODY_BYTES("max-body-bytes", "1048576", "largest inbound HTTP request body in bytes",
                Kind.INT, 1_024, 64 * 1024 * 1024),
        MAX_OUTBOUND_BYTES("max-outbound-bytes", "1048576",
                "bytes written to one connection and not yet read before it is dropped (1013; it may resume)",
                Kind.INT, 16 * 1024, 1 << 30),
        RATE_LIMIT_RUNS_PER_MINUTE("rate-limit-runs-per-minute", "60",
                "runs one client (principal, or address when anonymous) may start a minute; 0 = no limit",
                Kind.INT, 0, 1_000_000),
        MAX_CONNECTIONS_PER_CLIENT("max-connections-per-client", "50",
                "open WebSockets and streams of one client", Kind.INT, 1, 1_000_000),
        MAX_CONNECTIONS("max-connections", "20000", "open TCP connections in all", Kind.INT, 1, 10_000_000),
        SOCKET_SEND_BUFFER_BYTES("socket-send-buffer-bytes", "0",
                "kernel send buffer per connection (SO_SNDBUF); 0 leaves it to the OS", Kind.INT, 0, 64 << 20),
        MAX_OUTBOUND_EVENTS("max-outbound-events", "4096",
                "events waiting for one connection's thread before it is dropped", Kind.INT, 16, 1_000_000),
        MODERATION("moderation", "true", "block messages containing blocked words", Kind.BOOL, 0, 0),
        BLOCKED_WORDS_FILE("blocked-words-file", "",
                "file of blocked words, one a line, replacing the built-in list", Kind.TEXT, 0, 0),
        SHUTDOWN_GRACE_SECONDS("shutdown-grace-seconds", "10",
                "how long active runs may finish on shutdown", Kind.INT, 0, 3_600),
        IDLE_TIMEOUT_SECONDS("idle-timeout-seconds", "90",
                "close a WebSocket that sent no frame for this long (1001)", Kind.INT, 1, 86_400),
        JWT_SECRET("jwt-secret", "", "HS256 secret (at least 32 bytes): clients must present a signed JWT",
                Kind.TEXT, 0, 0),
        JWT_PUBLIC_KEY("jwt-public-key", "", "PEM file of an RSA public key: clients must present an RS256 JWT",
                Kind.TEXT, 0, 0),
        JWT_CLOCK_SKEW_SECONDS("jwt-clock-skew-seconds", "60", "leeway for a token's exp and nbf",
                Kind.INT, 0, 3_600),
        A2H_API_KEY("a2h-api-key", "", "API key agents present to the A2H REST endpoints (repeatable); "
                + "without one only loopback callers are served", Kind.LIST, 0, 0, "SWITCHBOARD_A2H_API_KEYS"),
        OPENAI_BASE_URL("openai-base-url", "", "runtime openai: base URL of an OpenAI-compatible API "
                + "(e.g. http://127.0.0.1:11434/v1)", Kind.TEXT, 0, 0),
        OPENAI_API_KEY("openai-api-key", "", "runtime openai: API key (also read from OPENAI_API_KEY)",
                Kind.TEXT, 0, 0),
        MODEL("model", "", "runtime openai: model name", Kind.TEXT, 0, 0),
        SYSTEM_PROMPT("system-prompt", "", "runtime openai: system prompt sent first in every turn", Kind.TEXT, 0, 0),
        MAX_TOOL_ROUNDS("max-tool-rounds", "8", "runtime openai: tool rounds before a run fails", Kind.INT, 1, 100),
        UPSTREAM_TIMEOUT_SECONDS("upstream-timeout-seconds", "60",
                "runtimes openai and agui: time allowed for the upstream to answer and between its events",
                Kind.INT, 1, 3_600),
        APPROVAL_RISK("approval-risk", "high",
                "runtime openai: server tools at or above this risk (low, medium, high, critical) need an approval",
                Kind.TEXT, 0, 0),
        TOOLS("tools", "[]", "runtime openai: server tools, a JSON array of {name, description, parameters, "
                + "url, method, headers, timeoutSeconds, risk} (usually in the config file)", Kind.JSON, 0, 0),
        AGUI_UPSTREAM_URL("agui-upstream-url", "", "runtime agui: URL of the AG-UI agent to POST runs to",
                Kind.TEXT, 0, 0),
        AGUI_UPSTREAM_HEADER("agui-upstream-header", "",
                "runtime agui: header 'Name: value' sent upstream (repeatable)", Kind.LIST, 0, 0),
        AGUI_FORWARD_TOKEN("agui-forward-token", "false",
                "runtime agui: forward the client's bearer token upstream", Kind.BOOL, 0, 0),
        CONFIG("config", "", "JSON file of options (keys are the option names)", Kind.TEXT, 0, 0);

        private final String key;
        private final String defaultValue;
        private final String help;
        private final Kind kind;
        private final int min;
        private final int max;
        private final List<String> choices;
        private final String envName;
        /** A second variable read too, a spelling earlier releases documented. */
        private final String envAlias;

        Option(String key, String defaultValue, String help, Kind kind, int min, int max) {
            this(key, defaultValue, help, kind, min, max, null);
        }

        Option(String key, String defaultValue, String help, Kind kind, int min, int max, String envAlias) {
            this(key, defaultValue, help, kind, min, max, List.of(), envAlias);
        }

        Option(String key, String defaultValue, String help, String... choices) {
            this(key, defaultValue, help, Kind.CHOICE, 0, 0, List.of(choices), null);
        }

        Option(String key, String defaultValue, String help, Kind kind, int min, int max, List<String> choices,
               String envAlias) {
            this.key = key;
            this.defaultValue = defaultValue;
            this.help = help;
            this.kind = kind;
            this.min = min;
            this.max = max;
            this.choices = choices;
            this.envName = "SWITCHBOARD_" + key.toUpperCase(Locale.ROOT).replace('-', '_');
            this.envAlias = envAlias;
        }

        public String key() {
            return key;
        }

        /** The environment variable of the option, {@code SWITCHBOARD_<KEY>}. */
        public String envName() {
            return envName;
        }

        /** Every environment variable the option is read from. */
        List<String> envNames() {
            return envAlias == null ? List.of(envName) : List.of(envName, envAlias);
        }

        /** What the option accepts, for messages and {@code --help}. */
        public String accepts() {
            return switch (kind) {
                case INT -> "an integer from " + min + " to " + max;
                case BOOL -> "true or false";
                case TEXT -> "text";
                case LIST -> "text; repeat the flag for several (in the environment: comma- or newline-separated)";
                case JSON -> "a JSON array or object";
                case CHOICE -> "one of " + String.join(", ", choices);
            };
        }

        static Optional<Option> byKey(String key) {
            for (Option o : values()) {
                if (o.key.equals(key)) {
                    return Optional.of(o);
                }
            }
            return Optional.empty();
        }
    }

    private enum Kind { TEXT, INT, BOOL, LIST, JSON, CHOICE }

    private static final String ENV_PREFIX = "SWITCHBOARD_";

    /** Separates the values of a repeatable option. */
    private static final String LIST_SEPARATOR = "\n";

    /** A configuration mistake, reported before anything starts. */
    public static final class ConfigException extends RuntimeException {
        public ConfigException(String message) {
            super(message);
        }
    }

    private final Map<Option, String> values;
    /** The options given a value (by flag, environment, file or builder) rather than left at their default. */
    private final Set<Option> given;
    private final List<String> warnings;

    private GatewayConfig(Map<Option, String> values, Set<Option> given, List<String> warnings) {
        this.values = values;
        this.given = given;
        this.warnings = List.copyOf(warnings);
        for (Option o : Option.values()) {
            check(o, values.get(o), "");
        }
    }

    /** What parsing found suspicious but not wrong (a variable naming no option), for the start-up log. */
    public List<String> warnings() {
        return warnings;
    }

    /** The defaults. */
    public static GatewayConfig defaults() {
        return builder().build();
    }

    /** A builder starting from the defaults, for tests and embedding. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Parses the command line over the environment over the config file over the defaults.
     * {@code env} is usually {@code System.getenv()}.
     */
    public static GatewayConfig parse(String[] args, Map<String, String> env) {
        Map<Option, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new ConfigException("unexpected argument '" + arg + "'; options look like --name value (see --help)");
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            String key = name;
            Option o = Option.byKey(key).orElseThrow(() ->
                    new ConfigException("unknown option --" + key + " (see --help for the options)"));
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new ConfigException("option --" + key + " needs a value: " + o.accepts());
                }
                value = args[++i];
            }
            check(o, value, "option --" + key);
            if (o.kind == Kind.LIST && flags.containsKey(o)) {
                value = flags.get(o) + LIST_SEPARATOR + value;
            }
            flags.put(o, value);
        }
        Map<Option, String> envValues = new LinkedHashMap<>();
        // The variable every OpenAI client reads, below Switchboard's own.
        String openAiKey = env.get("OPENAI_API_KEY");
        if (openAiKey != null && !openAiKey.isBlank()) {
            envValues.put(Option.OPENAI_API_KEY, openAiKey);
        }
        Set<String> known = new HashSet<>();
        for (Option o : Option.values()) {
            for (String name : o.envNames()) {
                known.add(name);
                String v = env.get(name);
                if (v == null) {
                    continue;
                }
                if (o.kind == Kind.LIST) {
                    v = String.join(LIST_SEPARATOR, v.contains("\n") ? v.split("\n") : v.split(","));
                }
                check(o, v, "environment variable " + name);
                envValues.merge(o, v, (a, b) -> o.kind == Kind.LIST ? a + LIST_SEPARATOR + b : b);
            }
        }
        Builder b = builder();
        env.keySet().stream().filter(name -> name.startsWith(ENV_PREFIX) && !known.contains(name)).sorted()
                .forEach(name -> b.warnings.add("environment variable " + name + " names no option and is ignored"
                        + nearest(name.substring(ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '-'))
                                .map(o -> " (did you mean " + o.envName() + "?)").orElse("")));
        String configFile = flags.getOrDefault(Option.CONFIG, envValues.getOrDefault(Option.CONFIG, ""));
        if (!configFile.isEmpty()) {
            b.putAll(readFile(Path.of(configFile)));
        }
        b.putAll(envValues);
        b.putAll(flags);
        return b.build();
    }

    /** The option whose key is one edit away from {@code key}, if there is exactly one. */
    private static Optional<Option> nearest(String key) {
        Option found = null;
        for (Option o : Option.values()) {
            if (oneEditApart(o.key, key)) {
                if (found != null) {
                    return Optional.empty();
                }
                found = o;
            }
        }
        return Optional.ofNullable(found);
    }

    /** Whether one insertion, deletion, replacement or swap of neighbours turns {@code a} into {@code b}. */
    private static boolean oneEditApart(String a, String b) {
        if (a.equals(b) || Math.abs(a.length() - b.length()) > 1) {
            return false;
        }
        int i = 0;
        while (i < Math.min(a.length(), b.length()) && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        if (a.length() != b.length()) {
            String longer = a.length() > b.length() ? a : b;
            String shorter = longer == a ? b : a;
            return longer.substring(i + 1).equals(shorter.substring(i));
        }
        if (a.substring(i + 1).equals(b.substring(i + 1))) {
            return true;
        }
        return i + 1 < a.length() && a.charAt(i) == b.charAt(i + 1) && a.charAt(i + 1) == b.charAt(i)
                && a.substring(i + 2).equals(b.substring(i + 2));
    }

    private static Map<Option, String> readFile(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException("cannot read config file " + file + ": it does not exist");
        } catch (AccessDeniedException e) {
            throw new ConfigException("cannot read config file " + file + ": permission denied");
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + file + ": "
                    + (Files.isDirectory(file) ? "it is a directory" : e.getMessage()));
        }
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(bytes);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new ConfigException("config file " + file + " is not valid JSON"
                    + (at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr())
                    + ": " + e.getOriginalMessage().lines().findFirst().orElse(""));
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + file + ": " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new ConfigException("config file " + file + " must hold a JSON object of options");
        }
        Map<Option, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            Option o = Option.byKey(e.getKey()).orElseThrow(() -> new ConfigException(
                    "unknown option '" + e.getKey() + "' in config file " + file));
            if (o == Option.CONFIG) {
                throw new ConfigException("config file " + file + " cannot name another config file");
            }
            JsonNode v = e.getValue();
            String text;
            if (o.kind == Kind.JSON) {
                text = v.toString();
            } else if (o.kind == Kind.LIST && v.isArray()) {
                List<String> items = new ArrayList<>();
                v.forEach(item -> items.add(item.asText()));
                text = String.join(LIST_SEPARATOR, items);
            } else if (!v.isValueNode() || v.isNull()) {
                throw new ConfigException("option '" + o.key + "' in config file " + file + " must be " + o.accepts());
            } else {
                text = v.asText();
            }
            check(o, text, "option '" + o.key + "' in config file " + file);
            out.put(o, text);
        }
        return out;
    }

    private static void check(Option o, String value, String where) {
        String place = where.isEmpty() ? "option --" + o.key : where;
        switch (o.kind) {
            case INT -> {
                int n;
                try {
                    n = Integer.parseInt(value.strip());
                } catch (NumberFormatException e) {
                    throw new ConfigException(place + " is '" + value + "' but must be " + o.accepts());
                }
                if (n < o.min || n > o.max) {
                    throw new ConfigException(place + " is " + n + " but must be " + o.accepts());
                }
            }
            case BOOL -> {
                if (!value.equals("true") && !value.equals("false")) {
                    throw new ConfigException(place + " is '" + value + "' but must be " + o.accepts());
                }
            }
            case CHOICE -> {
                if (!o.choices.contains(value.strip().toLowerCase(Locale.ROOT))) {
                    throw new ConfigException(place + " is '" + value + "' but must be " + o.accepts());
                }
            }
            case TEXT, LIST -> {
                if (value.isBlank() && !o.defaultValue.isEmpty()) {
                    throw new ConfigException(place + " must not be empty");
                }
            }
            case JSON -> {
                try {
                    JsonNode node = Json.MAPPER.readTree(value);
                    if (node == null || !node.isContainerNode()) {
                        throw new ConfigException(place + " must be " + o.accepts());
                    }
                } catch (IOException e) {
                    throw new ConfigException(place + " is not valid JSON: " + e.getMessage());
                }
            }
        }
    }

    /** Whether the option was given a value rather than left at its default. */
    public boolean isGiven(Option o) {
        return given.contains(o);
    }

    /** The raw text of an option. */
    public String get(Option o) {
        return values.get(o);
    }

    /** The raw text of an option by key, for runtime modules; absent when empty. */
    public Optional<String> get(String key) {
        return Option.byKey(key).map(values::get).filter(v -> !v.isEmpty());
    }

    /** Every value of a repeatable option (empty when none). */
    public List<String> getAll(Option o) {
        String v = values.get(o);
        return v.isEmpty() ? List.of() : List.of(v.split(LIST_SEPARATOR));
    }

    public String host() {
        return get(Option.HOST);
    }

    public int port() {
        return intValue(Option.PORT);
    }

    public Path dataDir() {
        return Path.of(get(Option.DATA_DIR));
    }

    public String runtime() {
        return get(Option.RUNTIME);
    }

    /** The log level, lower case: trace, debug, info, warn or error. */
    public String logLevel() {
        return get(Option.LOG_LEVEL).strip().toLowerCase(Locale.ROOT);
    }

    public int demoDelayMs() {
        return intValue(Option.DEMO_DELAY_MS);
    }

    public int maxFrameBytes() {
        return intValue(Option.MAX_FRAME_BYTES);
    }

    public int maxBodyBytes() {
        return intValue(Option.MAX_BODY_BYTES);
    }

    public long maxOutboundBytes() {
        return intValue(Option.MAX_OUTBOUND_BYTES);
    }

    public int rateLimitRunsPerMinute() {
        return intValue(Option.RATE_LIMIT_RUNS_PER_MINUTE);
    }

    public int maxConnectionsPerClient() {
        return intValue(Option.MAX_CONNECTIONS_PER_CLIENT);
    }

    public int maxConnections() {
        return intValue(Option.MAX_CONNECTIONS);
    }

    public int socketSendBufferBytes() {
        return intValue(Option.SOCKET_SEND_BUFFER_BYTES);
    }

    public int maxOutboundEvents() {
        return intValue(Option.MAX_OUTBOUND_EVENTS);
    }

    public boolean moderation() {
        return Boolean.parseBoolean(get(Option.MODERATION));
    }

    public Optional<Path> blockedWordsFile() {
        String v = get(Option.BLOCKED_WORDS_FILE);
        return v.isEmpty() ? Optional.empty() : Optional.of(Path.of(v));
    }

    public int shutdownGraceSeconds() {
        return intValue(Option.SHUTDOWN_GRACE_SECONDS);
    }

    public int idleTimeoutSeconds() {
        return intValue(Option.IDLE_TIMEOUT_SECONDS);
    }

    public Optional<String> jwtSecret() {
        return get(Option.JWT_SECRET.key());
    }

    public Optional<Path> jwtPublicKey() {
        return get(Option.JWT_PUBLIC_KEY.key()).map(Path::of);
    }

    public int jwtClockSkewSeconds() {
        return intValue(Option.JWT_CLOCK_SKEW_SECONDS);
    }

    private int intValue(Option o) {
        return Integer.parseInt(get(o).strip());
    }

    /** The {@code --help} text, {@code runtimes} being the ids {@code --runtime} accepts. */
    public static String help(Collection<String> runtimes) {
        int width = 0;
        for (Option o : Option.values()) {
            width = Math.max(width, o.key.length());
        }
        String indent = " ".repeat(width + 6);
        StringBuilder sb = new StringBuilder("""
                Usage: java -jar switchboard.jar [--option value]...
                       java -jar switchboard.jar --help | --version

                Options (each also an environment variable SWITCHBOARD_<NAME>, --data-dir being SWITCHBOARD_DATA_DIR,
                or a key of the --config JSON file; flags beat the environment, which beats the file):
                """);
        for (Option o : Option.values()) {
            String help = o == Option.RUNTIME ? o.help + ", one of " + String.join(", ", runtimes) : o.help;
            String text = help + " (" + o.accepts() + "; default: "
                    + (o.defaultValue.isEmpty() ? "none" : o.defaultValue)
                    + (o.envAlias == null ? "" : "; also read from " + o.envAlias) + ")";
            sb.append("  --").append(o.key).append(" ".repeat(width - o.key.length() + 2));
            wrap(sb, text, indent, HELP_COLUMNS - indent.length());
        }
        return sb.toString();
    }

    private static final int HELP_COLUMNS = 110;

    /** Appends {@code text} in lines of at most {@code columns}, each after the first indented. */
    private static void wrap(StringBuilder sb, String text, String indent, int columns) {
        int line = 0;
        for (String word : text.split(" ")) {
            if (line > 0 && line + 1 + word.length() > columns) {
                sb.append('\n').append(indent);
                line = 0;
            } else if (line > 0) {
                sb.append(' ');
                line++;
            }
            sb.append(word);
            line += word.length();
        }
        sb.append('\n');
    }

    /** Sets options one by one over the defaults. */
    public static final class Builder {
        private final Map<Option, String> values = new LinkedHashMap<>();
        private final List<String> warnings = new ArrayList<>();
        private final Set<Option> given = EnumSet.noneOf(Option.class);

        private Builder() {
            for (Option o : Option.values()) {
                values.put(o, o.defaultValue);
            }
        }

        public Builder set(Option o, Object value) {
            String v = String.valueOf(value);
            check(o, v, "");
            values.put(o, v);
            given.add(o);
            return this;
        }

        private void putAll(Map<Option, String> checked) {
            values.putAll(checked);
            given.addAll(checked.keySet());
        }

        public GatewayConfig build() {
            return new GatewayConfig(new LinkedHashMap<>(values), EnumSet.copyOf(given), warnings);
        }
    }
}
