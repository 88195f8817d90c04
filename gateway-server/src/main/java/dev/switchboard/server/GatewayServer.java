package dev.switchboard.server;

import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Moderation;
import dev.switchboard.core.Plural;
import dev.switchboard.core.internal.HubMetrics;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.AgentRuntimeProvider;
import dev.switchboard.core.spi.Authenticator;
import dev.switchboard.core.spi.AuthenticatorProvider;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ClusterProvider;
import dev.switchboard.core.spi.ConversationStoreProvider;
import dev.switchboard.core.spi.Plugin;
import dev.switchboard.core.spi.RestServiceProvider;
import dev.switchboard.core.spi.Telemetry;
import dev.switchboard.core.spi.WireAdapterProvider;
import dev.switchboard.server.internal.AdapterRegistry;
import dev.switchboard.server.internal.ConnectionLimits;
import dev.switchboard.server.internal.DataDirLock;
import dev.switchboard.server.internal.HttpRouter;
import dev.switchboard.server.internal.MetricsEndpoint;
import dev.switchboard.server.internal.PlaygroundFiles;
import dev.switchboard.server.internal.RestRoutes;
import dev.switchboard.server.internal.ServerMetrics;
import dev.switchboard.server.internal.StoreHealth;
import dev.switchboard.server.internal.Tracing;
import dev.switchboard.server.internal.WebSocketConnection;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.opentelemetry.api.OpenTelemetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gateway: one Netty port serving every dialect, the conversation hub, the store and the
 * agent runtime. Build it with {@link #builder(GatewayConfig)}, {@link #start()} it (port 0
 * picks a free port, see {@link #port()}), and {@link #stop()} it gracefully.
 */
public final class GatewayServer {
    private static final Logger log = LoggerFactory.getLogger(GatewayServer.class);
    /** How often {@code /healthz}'s view of the store is refreshed. */
    private static final Duration STORE_CHECK_EVERY = Duration.ofSeconds(5);

    private final GatewayConfig config;
    private final Authenticator authenticator;
    private final Moderation moderation;
    private final AdapterRegistry adapters;
    private final AgentRuntime runtime;
    /** The store the builder was given; null for the SQLite file in the data directory. */
    private final ConversationStore givenStore;
    private final ConnectionLimits limits;
    private final ExecutorService restExecutor;
    private final Set<WebSocketConnection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger httpStreams = new AtomicInteger();
    private final EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
    // Set by start() before the port accepts its first connection.
    private volatile DataDirLock dataDirLock;
    private volatile ConversationStore store;
    private volatile ConversationHub hub;
    private volatile RestRoutes rest;
    private volatile StoreHealth storeHealth;
    /** The cluster this gateway joins, or null when it runs alone. */
    private final ClusterProvider cluster;
    private volatile ClusterBus bus;
    private volatile Channel serverChannel;
    private volatile boolean ready;
    private CompletableFuture<GatewayServer> started;
    private volatile CompletableFuture<Void> stopped;
    /** Every meter of the gateway; Prometheus's when {@code --metrics} is on, else one that keeps nothing. */
    private final MeterRegistry meters;
    private final ServerMetrics serverMetrics;
    /** Listens to the JVM's collections: closed with the gateway. */
    private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
    /** Where spans go: the OTLP exporter's SDK, one given to the builder, or a no-op. */
    private final OpenTelemetry openTelemetry;
    /** Whether this gateway made {@link #openTelemetry} (and so shuts it down). */
    private final boolean ownsOpenTelemetry;
    private final Telemetry telemetry;
    /** The playground page's files; null when {@code --playground} is off. */
    private final PlaygroundFiles playground;
    /** The {@code /metrics} port's server when it has its own port; null otherwise. */
    private volatile MetricsEndpoint metricsEndpoint;

    private GatewayServer(Builder b) {
        this.config = b.config;
        this.meters = config.metrics() ? new PrometheusMeterRegistry(PrometheusConfig.DEFAULT) : HubMetrics.none();
        this.serverMetrics = new ServerMetrics(meters);
        bindProcessMeters();
        this.ownsOpenTelemetry = b.openTelemetry == null && !config.otlpEndpoint().isEmpty();
        this.openTelemetry = b.openTelemetry != null ? b.openTelemetry
                : ownsOpenTelemetry ? Tracing.otlp(config.otlpEndpoint(), Main.version()) : OpenTelemetry.noop();
        this.telemetry = new Telemetry(meters, openTelemetry, config.otelCaptureContent());
        if (ownsOpenTelemetry) {
            log.info("traces go to {} over OTLP/HTTP{}", config.otlpEndpoint(),
                    config.otelCaptureContent() ? ", prompts and completions included (--otel-capture-content)" : "");
        }
        for (Plugins.Found f : config.plugins().all()) {
            if (!f.origin().equals(Plugins.BUILT_IN)) {
                log.info("plugin {} loaded from {}", f.kind().noun() + " " + f.provider().id(), f.origin());
            }
        }
        // Configuration mistakes first, before anything is opened or started.
        this.authenticator = authenticatorFor(config);
        this.moderation = moderationFor(config);
        this.adapters = new AdapterRegistry(config.plugins().providers(WireAdapterProvider.class),
                AdapterContext.defaults().withSettings(config.settings()));
        this.runtime = b.runtime != null ? b.runtime : runtimeFor(config, telemetry);
        this.givenStore = b.store;
        this.cluster = clusterFor(config, b.store);
        this.limits = new ConnectionLimits(config.maxConnections(), config.maxConnectionsPerClient());
        AtomicInteger restThreads = new AtomicInteger();
        this.restExecutor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "switchboard-rest-" + restThreads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.playground = config.playground()
                ? new PlaygroundFiles(authenticator.required(), config.runtime(), Main.version()) : null;
        if (!authenticator.required()) {
            log.info("authentication is off: every client is anonymous (set --jwt-secret or --jwt-public-key)");
        }
    }

    public static Builder builder(GatewayConfig config) {
        return new Builder(config);
    }

    /**
     * Locks the data directory, binds the port, then opens the store (recovering runs a stop
     * interrupted) and starts serving; completes when the gateway serves, or exceptionally with a
     * {@link StartupException} saying in one line what is in use or cannot be written. A second
     * gateway on the same data directory or port stops before it touches the store.
     */
    public synchronized CompletableFuture<GatewayServer> start() {
        if (started != null) {
            return started;
        }
        started = new CompletableFuture<>();
        try {
            if (givenStore == null) {
                dataDirLock = DataDirLock.acquire(config.dataDir());
            }
            serverChannel = bind();
            if (config.metrics() && config.metricsPort() > 0) {
                metricsEndpoint = MetricsEndpoint.start(config.host(), config.metricsPort(), this::scrape);
            }
            store = givenStore != null ? givenStore : openStore(config);
            bus = cluster == null ? null : connect(cluster, config);
            if (bus != null) {
                limits.joinCluster(bus);
            }
            hub = ConversationHub.builder()
                    .store(store)
                    .runtime(runtime)
                    .moderation(moderation)
                    .runsPerMinute(config.rateLimitRunsPerMinute())
                    .cluster(bus)
                    .meters(meters)
                    .openTelemetry(openTelemetry)
                    .recordPrincipal(config.otelRecordPrincipal())
                    .build();
            rest = restRoutes();
            storeHealth = new StoreHealth(store, bus, STORE_CHECK_EVERY);
        } catch (RuntimeException e) {
            abandonStart();
            started.completeExceptionally(e);
            return started;
        }
        // The port accepts from here on: everything a connection uses is in place.
        serverChannel.config().setAutoRead(true);
        ready = true;
        log.info("Switchboard listening on {}:{} (runtime {}, data dir {}{})", config.host(), port(),
                config.runtime(), config.dataDir(), bus == null ? "" : ", cluster node " + bus.nodeId());
        log.info(PlaygroundFiles.startupLine(config, port()));
        started.complete(this);
        return started;
    }

    /** Binds the port without accepting yet (the server channel does not read until started). */
    private Channel bind() {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.AUTO_READ, false)
                // The pooled allocator rather than Netty's default (the adaptive one): a buffer of the
                // adaptive one hands the socket's gathering write a new NIO slice of its memory each time,
                // one object per frame written, 13% of the bytes the gateway allocated at 1,000 clients;
                // a pooled buffer keeps one. It is also the allocator the netty_allocator_* meters read.
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("count", limits.counter());
                        ch.pipeline().addLast("http", new HttpServerCodec());
                        ch.pipeline().addLast("http-aggregator", new HttpObjectAggregator(config.maxBodyBytes()));
                        ch.pipeline().addLast("router", new HttpRouter(hub, adapters, authenticator, config,
                                rest, restExecutor, limits, httpStreams, () -> ready, GatewayServer.this::storeProblem,
                                GatewayServer.this::clusterProblem, bus == null ? null : bus.nodeId(), serverMetrics,
                                config.metrics() && config.metricsPort() == 0 ? GatewayServer.this::scrape : null, conn -> {
                                    connections.add(conn);
                                    ch.closeFuture().addListener(f -> connections.remove(conn));
                                }, playground));
                    }
                });
        if (config.socketSendBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_SNDBUF, config.socketSendBufferBytes());
        }
        ChannelFuture bound = bootstrap.bind(config.host(), config.port()).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            Throwable cause = bound.cause();
            String where = config.host() + ":" + config.port();
            // A BindException also says an address is not this machine's; only "in use" is a taken port.
            if (cause instanceof BindException && String.valueOf(cause.getMessage()).contains("in use")) {
                throw new StartupException("cannot listen on " + where + ": the port is in use (another gateway "
                        + "or another program listens there); stop it, or choose another --port", cause);
            }
            throw new StartupException("cannot listen on " + where + ": " + cause.getMessage(), cause);
        }
        return bound.channel();
    }

    /** Opens the store {@code --store} names, or the one whose options are set, or the default (see {@link #storeFor}). */
    private static ConversationStore openStore(GatewayConfig config) {
        ConversationStoreProvider provider = storeFor(config);
        try {
            return provider.open(config.settings(), config.dataDir());
        } catch (IllegalArgumentException e) {
            throw new GatewayConfig.ConfigException("store " + provider.id() + ": " + e.getMessage());
        } catch (IllegalStateException | UncheckedIOException e) {
            throw new StartupException(e.getMessage(), e);
        }
    }

    /**
     * The store {@code --store} names; without it, the one store whose own options are set (such as
     * {@code --store-url}), else the default {@code sqlite}. Several set is a configuration mistake
     * naming them.
     */
    static ConversationStoreProvider storeFor(GatewayConfig config) {
        if (config.isGiven(GatewayConfig.Option.STORE)) {
            return chosen(config, ConversationStoreProvider.class, Plugins.Kind.STORE, GatewayConfig.Option.STORE);
        }
        List<ConversationStoreProvider> configured = config.plugins().providers(ConversationStoreProvider.class)
                .stream().filter(p -> p.configured(config.settings())).toList();
        if (configured.size() > 1) {
            throw new GatewayConfig.ConfigException("the options of several stores are set ("
                    + configured.stream().map(Plugin::id).toList() + "); choose one with --store");
        }
        return configured.isEmpty()
                ? chosen(config, ConversationStoreProvider.class, Plugins.Kind.STORE, GatewayConfig.Option.STORE)
                : configured.get(0);
    }

    /**
     * The cluster whose options are set, or null; a configuration mistake when several are, or when
     * the store is one only this gateway can use (a cluster's nodes share their store).
     */
    private static ClusterProvider clusterFor(GatewayConfig config, ConversationStore given) {
        List<ClusterProvider> configured = config.plugins().providers(ClusterProvider.class).stream()
                .filter(p -> p.configured(config.settings())).toList();
        if (configured.isEmpty()) {
            return null;
        }
        if (configured.size() > 1) {
            throw new GatewayConfig.ConfigException("the options of several clusters are set ("
                    + configured.stream().map(Plugin::id).toList() + "); set one");
        }
        ClusterProvider cluster = configured.get(0);
        boolean shared = given != null ? given.shared() : storeFor(config).shared();
        if (!shared) {
            throw new GatewayConfig.ConfigException("a cluster (" + cluster.id() + ") needs a store every node "
                    + "shares, and store " + (given != null ? given.getClass().getSimpleName() : storeFor(config).id())
                    + " is one gateway's own; give --store-url postgresql://USER:PASSWORD@HOST:PORT/DB");
        }
        return cluster;
    }

    /** Connects to the cluster; what cannot be reached stops the start, in one line. */
    private static ClusterBus connect(ClusterProvider cluster, GatewayConfig config) {
        try {
            return cluster.connect(config.settings());
        } catch (IllegalArgumentException e) {
            throw new GatewayConfig.ConfigException("cluster " + cluster.id() + ": " + e.getMessage());
        } catch (Exception e) {
            throw new StartupException("cannot join the cluster (" + cluster.id() + "): " + e.getMessage(), e);
        }
    }

    /** The provider of a kind whose id an option names; another id is a configuration mistake listing the ids. */
    private static <T extends Plugin> T chosen(GatewayConfig config, Class<T> spi, Plugins.Kind kind,
                                               GatewayConfig.Option option) {
        String id = config.get(option).strip();
        for (T p : config.plugins().providers(spi)) {
            if (p.id().equals(id)) {
                return p;
            }
        }
        throw new GatewayConfig.ConfigException("option --" + option.key() + " is '" + id
                + "' but must be one of " + config.plugins().ids(kind));
    }

    private RestRoutes restRoutes() {
        try {
            return RestRoutes.load(config.plugins().providers(RestServiceProvider.class),
                    new RestServiceProvider.Context(hub.conversations(), hub.operatorApprovals(), store,
                            config.settings()));
        } catch (IllegalArgumentException e) {
            throw new GatewayConfig.ConfigException(e.getMessage());
        }
    }

    /** What kept the store from serving at its last check, or null when it served (see {@link StoreHealth}). */
    private String storeProblem() {
        StoreHealth h = storeHealth;
        return h == null ? null : h.problem();
    }

    /** What kept the cluster's bus from answering at its last check, or null (see {@link StoreHealth}). */
    private String clusterProblem() {
        StoreHealth h = storeHealth;
        return h == null ? null : h.clusterProblem();
    }

    /** Gives back what a failed start opened, newest first. */
    private void abandonStart() {
        if (storeHealth != null) {
            storeHealth.close();
        }
        if (hub != null) {
            hub.close();
        } else {
            runtime.close();
        }
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        shutdownNow();
        restExecutor.shutdownNow();
        closeMetrics();
        closeBus();
        if (store != null) {
            store.close();
        }
        if (dataDirLock != null) {
            dataDirLock.close();
        }
    }

    private void closeMetrics() {
        MetricsEndpoint m = metricsEndpoint;
        if (m != null) {
            m.close();
        }
        gcMetrics.close();
        meters.close();
        if (ownsOpenTelemetry) {
            Tracing.close(openTelemetry);
        }
    }

    /** Leaves the cluster, if this gateway joined one. */
    private void closeBus() {
        ClusterBus b = bus;
        if (b != null) {
            try {
                b.close().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("the cluster's connections did not close cleanly: {}", e.toString());
            }
        }
    }

    /** The JVM's, Netty's and the build's meters, beside the hub's and the connections'. */
    private void bindProcessMeters() {
        new ClassLoaderMetrics().bindTo(meters);
        new JvmMemoryMetrics().bindTo(meters);
        gcMetrics.bindTo(meters);
        new JvmThreadMetrics().bindTo(meters);
        new ProcessorMetrics().bindTo(meters);
        new UptimeMetrics().bindTo(meters);
        new NettyAllocatorMetrics(PooledByteBufAllocator.DEFAULT).bindTo(meters);
        new NettyEventExecutorMetrics(workers).bindTo(meters);
        Gauge.builder("switchboard.build.info", () -> 1).description("the gateway's version, always 1")
                .tag("version", Main.version()).tag("java", System.getProperty("java.version")).register(meters);
    }

    /** Every meter in the Prometheus text format; empty when {@code --metrics} is off. */
    private String scrape() {
        return meters instanceof PrometheusMeterRegistry p ? p.scrape() : "";
    }

    /** The port {@code /metrics} is served on: its own, or the main one; -1 when it is not served. */
    public int metricsPort() {
        if (!config.metrics()) {
            return -1;
        }
        MetricsEndpoint m = metricsEndpoint;
        return m != null ? m.port() : port();
    }

    /** The bound port. */
    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** The conversation hub, for embedding; null until started. */
    public ConversationHub hub() {
        return hub;
    }

    /** Stops with the configured grace period. */
    public CompletableFuture<Void> stop() {
        return stop(Duration.ofSeconds(config.shutdownGraceSeconds()));
    }

    /**
     * Stops accepting connections, lets active runs finish within {@code grace} (their
     * clients still receive them; a run that only waits for an approval ends at once, its
     * approval kept pending), closes WebSockets with 1001, and flushes the store.
     */
    public synchronized CompletableFuture<Void> stop(Duration grace) {
        if (stopped != null) {
            return stopped;
        }
        if (started == null || started.isCompletedExceptionally()) {
            if (started == null) {
                runtime.close();
                shutdownNow();
                restExecutor.shutdownNow();
            }
            stopped = CompletableFuture.completedFuture(null);
            return stopped;
        }
        ready = false;
        log.info("Switchboard stopping: {}, {} and {} open, grace {}s", Plural.of(hub.activeRuns(), "active run"),
                Plural.of(connections.size(), "WebSocket"), Plural.of(httpStreams.get(), "HTTP stream"),
                grace.toSeconds());
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        stopped = hub.shutdown(grace).handle((v, e) -> {
            if (e != null) {
                log.error("hub shutdown failed", e);
            }
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (WebSocketConnection c : connections) {
                CompletableFuture<Void> done = new CompletableFuture<>();
                closing.add(done);
                c.closeFuture().addListener(f -> done.complete(null));
                c.executeClose(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "the gateway is shutting down");
            }
            try {
                CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).get(2, TimeUnit.SECONDS);
            } catch (Exception timeout) {
                log.debug("some connections did not close in time");
            }
            shutdownNow();
            restExecutor.shutdownNow();
            closeMetrics();
            storeHealth.close();
            closeBus();
            store.close();
            if (dataDirLock != null) {
                dataDirLock.close();
            }
            log.info("Switchboard stopped");
            return null;
        });
        return stopped;
    }

    private void shutdownNow() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static AgentRuntime runtimeFor(GatewayConfig config, Telemetry telemetry) {
        AgentRuntimeProvider provider = chosen(config, AgentRuntimeProvider.class, Plugins.Kind.RUNTIME,
                GatewayConfig.Option.RUNTIME);
        try {
            return provider.create(config.settings(), telemetry);
        } catch (IllegalArgumentException e) {
            throw new GatewayConfig.ConfigException("runtime " + provider.id() + ": " + e.getMessage());
        }
    }

    /** The one authentication module whose options are set, or anonymous access when none is. */
    private static Authenticator authenticatorFor(GatewayConfig config) {
        Authenticator chosen = null;
        String chosenId = null;
        for (AuthenticatorProvider p : config.plugins().providers(AuthenticatorProvider.class)) {
            Optional<Authenticator> a;
            try {
                a = p.create(config.settings());
            } catch (IllegalArgumentException e) {
                throw new GatewayConfig.ConfigException(e.getMessage());
            }
            if (a.isPresent()) {
                if (chosen != null) {
                    throw new GatewayConfig.ConfigException("the options of two authentication modules are set, "
                            + chosenId + " and " + p.id() + "; set one");
                }
                chosen = a.get();
                chosenId = p.id();
            }
        }
        return chosen != null ? chosen : Authenticator.anonymous();
    }

    private static Moderation moderationFor(GatewayConfig config) {
        if (!config.moderation()) {
            return Moderation.disabled();
        }
        if (config.blockedWordsFile().isEmpty()) {
            return Moderation.defaults();
        }
        var file = config.blockedWordsFile().get();
        try (InputStream in = Files.newInputStream(file)) {
            return Moderation.of(Moderation.parse(in));
        } catch (IOException e) {
            throw new GatewayConfig.ConfigException("option --blocked-words-file names " + file
                    + ", which cannot be read: " + e.getMessage());
        }
    }

    /** Builds a server; the store and runtime default to what the configuration names. */
    public static final class Builder {
        private final GatewayConfig config;
        private ConversationStore store;
        private AgentRuntime runtime;
        private OpenTelemetry openTelemetry;

        private Builder(GatewayConfig config) {
            this.config = Objects.requireNonNull(config);
        }

        /** Uses this store instead of the SQLite file in the data dir. */
        public Builder store(ConversationStore store) {
            this.store = store;
            return this;
        }

        /** Uses this runtime instead of the one {@code --runtime} names. */
        public Builder runtime(AgentRuntime runtime) {
            this.runtime = runtime;
            return this;
        }

        /**
         * Sends spans through this OpenTelemetry instead of the exporter {@code --otlp-endpoint}
         * names (its owner closes it); for tests and embedding.
         */
        public Builder openTelemetry(OpenTelemetry otel) {
            this.openTelemetry = Objects.requireNonNull(otel);
            return this;
        }

        public GatewayServer build() {
            return new GatewayServer(this);
        }
    }
}
