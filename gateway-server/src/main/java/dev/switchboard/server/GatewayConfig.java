package dev.switchboard.server;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.server.internal.PlaygroundFiles;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The gateway's configuration: the host's own options ({@link Option}) and every option the
 * plugins declare ({@link OptionSpec}, collected by {@link Plugins}). Each option is a command-line
 * flag {@code --name}, an environment variable {@code SWITCHBOARD_NAME} and a key of the JSON config
 * file ({@code --config FILE}); precedence is defaults &lt; file &lt; environment &lt; flags. A bad
 * value stops start-up with a {@link ConfigException} naming the option and what it accepts.
 */
public final class GatewayConfig {

    /** The host's own options: transport, limits, data directory and which plugins to use. */
    public enum Option {
        HOST(OptionSpec.text("host", "127.0.0.1", "address to listen on")),
        LOG_LEVEL(OptionSpec.choice("log-level", "info", "how much the gateway logs",
                "trace", "debug", "info", "warn", "error")),
        LOG_FORMAT(OptionSpec.choice("log-format", "text", "how log lines are written: text to read, or json, one "
                + "JSON object a line with the conversation and run ids as fields", "text", "json")),
        PORT(OptionSpec.integer("port", 8000, 0, 65_535, "TCP port; 0 picks a free one")),
        DATA_DIR(OptionSpec.text("data-dir", "./data", "directory of the gateway's files (the store's, for SQLite)")),
        RUNTIME(OptionSpec.text("runtime", "demo", "agent runtime: the id of an installed runtime module")),
        STORE(OptionSpec.text("store", "sqlite", "conversation store: the id of an installed store module (default: "
                + "the store whose options are set, such as --store-url, else sqlite)")),
        PLUGIN_DIR(OptionSpec.text("plugin-dir", "", "directory of plugin jars to load besides the built-in "
                + "modules (default: ./plugins when it exists)")),
        MAX_FRAME_BYTES(OptionSpec.integer("max-frame-bytes", 65_536, 1_024, 16 * 1024 * 1024,
                "largest inbound WebSocket message in bytes")),
        MAX_BODY_BYTES(OptionSpec.integer("max-body-bytes", 1_048_576, 1_024, 64 * 1024 * 1024,
                "largest inbound HTTP request body in bytes")),
        MAX_OUTBOUND_BYTES(OptionSpec.integer("max-outbound-bytes", 1_048_576, 16 * 1024, 1 << 30,
                "bytes written to one connection and not yet read before it is dropped (1013; it may resume)")),
        RATE_LIMIT_RUNS_PER_MINUTE(OptionSpec.integer("rate-limit-runs-per-minute", 60, 0, 1_000_000,
                "runs one client (principal, or address when anonymous) may start a minute; 0 = no limit")),
        MAX_CONNECTIONS_PER_CLIENT(OptionSpec.integer("max-connections-per-client", 50, 1, 1_000_000,
                "open WebSockets and streams of one client")),
        MAX_CONNECTIONS(OptionSpec.integer("max-connections", 20_000, 1, 10_000_000, "open TCP connections in all")),
        SOCKET_SEND_BUFFER_BYTES(OptionSpec.integer("socket-send-buffer-bytes", 0, 0, 64 << 20,
                "kernel send buffer per connection (SO_SNDBUF); 0 leaves it to the OS")),
        MAX_OUTBOUND_EVENTS(OptionSpec.integer("max-outbound-events", 4_096, 16, 1_000_000,
                "events waiting for one connection's thread before it is dropped")),
        MODERATION(OptionSpec.bool("moderation", true, "block messages containing blocked words")),
        BLOCKED_WORDS_FILE(OptionSpec.text("blocked-words-file", "",
                "file of blocked words, one a line, replacing the built-in list")),
        SHUTDOWN_GRACE_SECONDS(OptionSpec.integer("shutdown-grace-seconds", 10, 0, 3_600,
                "how long active runs may finish on shutdown")),
        IDLE_TIMEOUT_SECONDS(OptionSpec.integer("idle-timeout-seconds", 90, 1, 86_400,
                "close a WebSocket that sent no frame for this long (1001)")),
        METRICS(OptionSpec.bool("metrics", true, "serve Prometheus metrics at GET /metrics")),
        METRICS_PORT(OptionSpec.integer("metrics-port", 0, 0, 65_535,
                "serve /metrics on this port (same --host) instead of the main one; 0: on the main port")),
        OTLP_ENDPOINT(OptionSpec.text("otlp-endpoint", "", "export traces over OTLP/HTTP to this base URL "
                + "(e.g. http://127.0.0.1:4318; spans go to /v1/traces); empty: traces off")
                .alsoFromEnv("OTEL_EXPORTER_OTLP_ENDPOINT")
                .checkedBy(v -> v.isBlank() || v.strip().matches("https?://[^\\s/?#]+(/[^\\s?#]*)?") ? null
                        : "is '" + v + "' but must be an http:// or https:// URL")),
        OTEL_CAPTURE_CONTENT(OptionSpec.bool("otel-capture-content", false,
                "record prompts and completions in model-call spans (off: never recorded)")),
        OTEL_RECORD_PRINCIPAL(OptionSpec.bool("otel-record-principal", false,
                "name the principal's subject in run spans (enduser.id)")),
        PLAYGROUND(OptionSpec.choice("playground", "auto", "serve the playground page at GET /; auto: only when "
                + "--host is a loopback address", "auto", "true", "false")),
        CONFIG(OptionSpec.text("config", "", "JSON file of options (keys are the option names)"));

        private final OptionSpec spec;

        Option(OptionSpec spec) {
            this.spec = spec;
        }

        public String key() {
            return spec.name();
        }

        /** The option as a spec, as plugins declare theirs. */
        public OptionSpec spec() {
            return spec;
        }

        /** The environment variable of the option, {@code SWITCHBOARD_<KEY>}. */
        public String envName() {
            return spec.envName();
        }

        /** What the option accepts, for messages and {@code --help}. */
        public String accepts() {
            return spec.accepts();
        }

        static Optional<Option> byKey(String key) {
            for (Option o : values()) {
                if (o.key().equals(key)) {
                    return Optional.of(o);
                }
            }
            return Optional.empty();
        }
    }

    /** Separates the values of a repeatable option. */
    private static final String LIST_SEPARATOR = "\n";

    /** A configuration mistake, reported before anything starts. */
    public static final class ConfigException extends RuntimeException {
        public ConfigException(String message) {
            super(message);
        }
    }

    private final Plugins plugins;
    /** Every option's spec by name: the host's, then the plugins'. */
    private final Map<String, OptionSpec> specs;
    private final Map<String, String> values;
    /** The options given a value (by flag, environment, file or builder) rather than left at their default. */
    private final Set<String> given;
    private final List<String> warnings;

    private GatewayConfig(Plugins plugins, Map<String, String> values, Set<String> given, List<String> warnings) {
        this.plugins = plugins;
        this.specs = catalog(plugins);
        this.values = values;
        this.given = given;
        this.warnings = List.copyOf(warnings);
        for (OptionSpec o : specs.values()) {
            check(o, values.get(o.name()), "");
        }
    }

    /** Every option of the host and of these plugins, by name. */
    private static Map<String, OptionSpec> catalog(Plugins plugins) {
        Map<String, OptionSpec> all = new LinkedHashMap<>();
        for (Option o : Option.values()) {
            all.put(o.key(), o.spec);
        }
        plugins.options().forEach(o -> all.putIfAbsent(o.name(), o));
        return all;
    }

    /** What parsing found suspicious but not wrong (a variable naming no option), for the start-up log. */
    public List<String> warnings() {
        return warnings;
    }

    /** The plugins whose options this configuration holds, and which the gateway assembles. */
    public Plugins plugins() {
        return plugins;
    }

    /** The defaults, with the built-in modules. */
    public static GatewayConfig defaults() {
        return builder().build();
    }

    /** A builder starting from the defaults of the built-in modules, for tests and embedding. */
    public static Builder builder() {
        return builder(Plugins.builtIn());
    }

    /** A builder starting from the defaults of the host and these plugins. */
    public static Builder builder(Plugins plugins) {
        return new Builder(plugins);
    }

    /**
     * Parses the command line over the environment over the config file over the defaults, with
     * the built-in modules and the jars of the plugin directory ({@code --plugin-dir}, else
     * {@code ./plugins} when it exists). {@code env} is usually {@code System.getenv()}.
     */
    public static GatewayConfig parse(String[] args, Map<String, String> env) {
        return parse(args, env, Plugins.load(pluginDir(args, env)));
    }

    /**
     * The plugin directory the arguments, environment or config file name, read before the plugins
     * are loaded (their options are not known yet); empty for none.
     */
    public static Optional<Path> pluginDir(String[] args, Map<String, String> env) {
        Map<String, String> host = new Builder(Plugins.none()).read(args, env, true).values;
        String dir = host.get(Option.PLUGIN_DIR.key());
        if (!dir.isEmpty()) {
            Path path = Path.of(dir);
            if (!Files.isDirectory(path)) {
                throw new ConfigException("option --plugin-dir is '" + dir + "', which is not a directory");
            }
            return Optional.of(path);
        }
        Path standard = Path.of("plugins");
        return Files.isDirectory(standard) ? Optional.of(standard) : Optional.empty();
    }

    /**
     * The host's own options alone, read before the plugins are loaded (what names a plugin's option
     * is skipped): what must be settled first, such as how the gateway logs.
     */
    public static GatewayConfig hostOptions(String[] args, Map<String, String> env) {
        return new Builder(Plugins.none()).read(args, env, true).build();
    }

    /** Parses with these plugins' options. */
    public static GatewayConfig parse(String[] args, Map<String, String> env, Plugins plugins) {
        return new Builder(plugins).read(args, env, false).build();
    }

    /** The option whose key is one edit away from {@code key}, if there is exactly one. */
    private static Optional<String> nearest(Set<String> names, String key) {
        String found = null;
        for (String name : names) {
            if (oneEditApart(name, key)) {
                if (found != null) {
                    return Optional.empty();
                }
                found = name;
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

    private static Map<String, String> readFile(Path file, Map<String, OptionSpec> specs, boolean lenient) {
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
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            OptionSpec o = specs.get(e.getKey());
            if (o == null) {
                if (lenient) {
                    continue;
                }
                throw new ConfigException("unknown option '" + e.getKey() + "' in config file " + file);
            }
            if (o.name().equals(Option.CONFIG.key())) {
                throw new ConfigException("config file " + file + " cannot name another config file");
            }
            JsonNode v = e.getValue();
            String text;
            if (o.type() == OptionSpec.Type.JSON) {
                text = v.toString();
            } else if (o.type() == OptionSpec.Type.LIST && v.isArray()) {
                List<String> items = new ArrayList<>();
                v.forEach(item -> items.add(item.asText()));
                text = String.join(LIST_SEPARATOR, items);
            } else if (!v.isValueNode() || v.isNull()) {
                throw new ConfigException("option '" + o.name() + "' in config file " + file + " must be " + o.accepts());
            } else {
                text = v.asText();
            }
            check(o, text, "option '" + o.name() + "' in config file " + file);
            out.put(o.name(), text);
        }
        return out;
    }

    private static void check(OptionSpec o, String value, String where) {
        String problem = o.problem(value);
        if (problem != null) {
            throw new ConfigException((where.isEmpty() ? "option --" + o.name() : where) + " " + problem);
        }
    }

    /** Whether the option was given a value rather than left at its default. */
    public boolean isGiven(Option o) {
        return given.contains(o.key());
    }

    /** The raw text of a host option. */
    public String get(Option o) {
        return values.get(o.key());
    }

    /** The raw text of any option by name, for plugins; absent when empty or not an option. */
    public Optional<String> get(String key) {
        return Optional.ofNullable(values.get(key)).filter(v -> !v.isEmpty());
    }

    /** Every value of a repeatable option by name (empty when none). */
    public List<String> getAll(String key) {
        return settings().getAll(key);
    }

    /** The configuration as plugins read it. */
    public Settings settings() {
        return this::get;
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

    /** The log format, lower case: text or json. */
    public String logFormat() {
        return get(Option.LOG_FORMAT).strip().toLowerCase(Locale.ROOT);
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

    /** The OTLP endpoint spans are exported to; empty when traces are off. */
    public String otlpEndpoint() {
        return get(Option.OTLP_ENDPOINT).strip();
    }

    public boolean otelCaptureContent() {
        return Boolean.parseBoolean(get(Option.OTEL_CAPTURE_CONTENT));
    }

    public boolean otelRecordPrincipal() {
        return Boolean.parseBoolean(get(Option.OTEL_RECORD_PRINCIPAL));
    }

    /** Whether {@code /metrics} is served. */
    public boolean metrics() {
        return Boolean.parseBoolean(get(Option.METRICS));
    }

    /** The port of {@code /metrics} when it has its own; 0 when it is served on the main port. */
    public int metricsPort() {
        return intValue(Option.METRICS_PORT);
    }

    /** Whether the playground page is served: as {@code --playground} says, else when {@code --host} is loopback. */
    public boolean playground() {
        String v = get(Option.PLAYGROUND).strip().toLowerCase(Locale.ROOT);
        return v.equals("auto") ? PlaygroundFiles.isLoopback(host()) : Boolean.parseBoolean(v);
    }

    private int intValue(Option o) {
        return Integer.parseInt(get(o).strip());
    }

    /** The {@code --help} text: the host's options, then each plugin's under its name. */
    public static String help(Plugins plugins) {
        List<Plugins.OptionGroup> groups = new ArrayList<>();
        groups.add(new Plugins.OptionGroup("Gateway", List.of(Option.values()).stream().map(Option::spec).toList()));
        groups.addAll(plugins.optionGroups());
        int width = 0;
        for (Plugins.OptionGroup g : groups) {
            for (OptionSpec o : g.options()) {
                width = Math.max(width, o.name().length());
            }
        }
        String indent = " ".repeat(width + 6);
        StringBuilder sb = new StringBuilder("""
                Usage: java -jar switchboard.jar [--option value]...
                       java -jar switchboard.jar --help | --version

                Each option is also an environment variable SWITCHBOARD_<NAME> (--data-dir is SWITCHBOARD_DATA_DIR)
                and a key of the --config JSON file; flags beat the environment, which beats the file.
                """);
        Set<String> listed = new HashSet<>();
        for (Plugins.OptionGroup g : groups) {
            sb.append('\n').append(g.title()).append(" options:\n");
            for (OptionSpec o : g.options()) {
                String help = o.name().equals(Option.RUNTIME.key()) ? o.help() + ", one of "
                        + String.join(", ", defaultFirst(o, plugins.ids(Plugins.Kind.RUNTIME)))
                        : o.name().equals(Option.STORE.key()) ? o.help() + ", one of "
                        + String.join(", ", defaultFirst(o, plugins.ids(Plugins.Kind.STORE)))
                        : o.help();
                String text = listed.add(o.name())
                        ? help + " (" + o.accepts() + "; default: "
                                + (o.defaultValue().isEmpty() ? "none" : o.defaultValue())
                                + (o.envAliases().isEmpty() ? "" : "; also read from "
                                        + String.join(", ", o.envAliases())) + ")"
                        : "the same option as above, read by this plugin too";
                sb.append("  --").append(o.name()).append(" ".repeat(width - o.name().length() + 2));
                wrap(sb, text, indent, HELP_COLUMNS - indent.length());
            }
        }
        return sb.toString();
    }

    private static final int HELP_COLUMNS = 110;

    /** The ids with the option's default first. */
    private static List<String> defaultFirst(OptionSpec o, List<String> ids) {
        List<String> ordered = new ArrayList<>(ids);
        if (ordered.remove(o.defaultValue())) {
            ordered.add(0, o.defaultValue());
        }
        return ordered;
    }

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
        private final Plugins plugins;
        private final Map<String, OptionSpec> specs;
        private final Map<String, String> values = new LinkedHashMap<>();
        private final List<String> warnings = new ArrayList<>();
        private final Set<String> given = new LinkedHashSet<>();

        private Builder(Plugins plugins) {
            this.plugins = plugins;
            this.specs = catalog(plugins);
            specs.values().forEach(o -> values.put(o.name(), o.defaultValue()));
        }

        public Builder set(Option o, Object value) {
            return set(o.key(), value);
        }

        /** Sets any option by name; a name no option has is a {@link ConfigException}. */
        public Builder set(String name, Object value) {
            OptionSpec o = specs.get(name);
            if (o == null) {
                throw new ConfigException("unknown option --" + name + " (see --help for the options)");
            }
            String v = String.valueOf(value);
            check(o, v, "");
            values.put(name, v);
            given.add(name);
            return this;
        }

        private void putAll(Map<String, String> checked) {
            values.putAll(checked);
            given.addAll(checked.keySet());
        }

        /**
         * Reads flags over the environment over the config file. Lenient, it skips what names no
         * option of its catalog (to find the host's options before the plugins are loaded).
         */
        private Builder read(String[] args, Map<String, String> env, boolean lenient) {
            Map<String, String> flags = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (!arg.startsWith("--") || arg.length() == 2) {
                    if (lenient) {
                        continue;
                    }
                    throw new ConfigException("unexpected argument '" + arg
                            + "'; options look like --name value (see --help)");
                }
                String key = arg.substring(2);
                String value = null;
                int eq = key.indexOf('=');
                if (eq >= 0) {
                    value = key.substring(eq + 1);
                    key = key.substring(0, eq);
                }
                OptionSpec o = specs.get(key);
                if (o == null) {
                    if (lenient) {
                        i += value == null ? 1 : 0;
                        continue;
                    }
                    throw new ConfigException("unknown option --" + key + " (see --help for the options)");
                }
                if (value == null) {
                    if (i + 1 >= args.length) {
                        throw new ConfigException("option --" + key + " needs a value: " + o.accepts());
                    }
                    value = args[++i];
                }
                check(o, value, "option --" + key);
                if (o.type() == OptionSpec.Type.LIST && flags.containsKey(key)) {
                    value = flags.get(key) + LIST_SEPARATOR + value;
                }
                flags.put(key, value);
            }
            Map<String, String> envValues = new LinkedHashMap<>();
            Set<String> known = new HashSet<>();
            for (OptionSpec o : specs.values()) {
                // Read the variables below the option's own first, so that its own wins (a list merges them).
                List<String> names = new ArrayList<>(o.envNames());
                java.util.Collections.reverse(names);
                for (String name : names) {
                    known.add(name);
                    String v = env.get(name);
                    if (v == null || (!name.startsWith(OptionSpec.ENV_PREFIX) && v.isBlank())) {
                        continue;
                    }
                    if (o.type() == OptionSpec.Type.LIST) {
                        v = String.join(LIST_SEPARATOR, v.contains("\n") ? v.split("\n") : v.split(","));
                    }
                    check(o, v, "environment variable " + name);
                    envValues.merge(o.name(), v, (below, own) -> o.type() == OptionSpec.Type.LIST
                            ? own + LIST_SEPARATOR + below : own);
                }
            }
            if (!lenient) {
                env.keySet().stream().filter(name -> name.startsWith(OptionSpec.ENV_PREFIX) && !known.contains(name))
                        .sorted()
                        .forEach(name -> warnings.add("environment variable " + name
                                + " names no option and is ignored"
                                + nearest(specs.keySet(), name.substring(OptionSpec.ENV_PREFIX.length())
                                        .toLowerCase(Locale.ROOT).replace('_', '-'))
                                        .map(o -> " (did you mean " + specs.get(o).envName() + "?)").orElse("")));
            }
            String configFile = flags.getOrDefault(Option.CONFIG.key(),
                    envValues.getOrDefault(Option.CONFIG.key(), ""));
            if (!configFile.isEmpty()) {
                putAll(readFile(Path.of(configFile), specs, lenient));
            }
            putAll(envValues);
            putAll(flags);
            return this;
        }

        public GatewayConfig build() {
            return new GatewayConfig(plugins, new LinkedHashMap<>(values), new LinkedHashSet<>(given), warnings);
        }
    }
}
