package dev.switchboard.server.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Plural;
import dev.switchboard.core.spi.Authenticator;
import dev.switchboard.core.spi.RestRequest;
import dev.switchboard.server.GatewayConfig;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.HttpExchange;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.Consumer;

/**
 * Routes each HTTP request on the shared port: health, WebSocket upgrades to the dialect of
 * the path (and subprotocol), and JSON errors for everything else.
 */
public final class HttpRouter extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final Logger log = LoggerFactory.getLogger(HttpRouter.class);

    private final ConversationHub hub;
    private final AdapterRegistry adapters;
    private final Authenticator authenticator;
    private final int maxFrameBytes;
    private final int maxOutboundEvents;
    private final long maxOutboundBytes;
    private final int idleTimeoutSeconds;
    private final BooleanSupplier ready;
    /** What keeps the store from serving, or null: reported by {@code /healthz}, which stays 200 for it. */
    private final Supplier<String> storeProblem;
    /** What keeps the cluster's bus from answering, or null; {@code /healthz} answers 503 for it. */
    private final Supplier<String> clusterProblem;
    /** This node's name in its cluster, or null when it runs alone. */
    private final String nodeId;
    private final Consumer<WebSocketConnection> onOpen;
    private final RestRoutes rest;
    private final Executor restExecutor;
    private final ConnectionLimits limits;
    /** HTTP exchanges of the dialects being answered on every connection, for the shutdown summary. */
    private final AtomicInteger openStreams;
    /** The HTTP exchange this connection is answering, if any; event loop only. */
    private HttpStream current;
    private final ServerMetrics metrics;
    /** The Prometheus text of every meter, for {@code GET /metrics}; null when this port does not serve it. */
    private final Supplier<String> scrape;
    /** The playground page's files; null when {@code --playground} is off. */
    private final PlaygroundFiles playground;

    public HttpRouter(ConversationHub hub, AdapterRegistry adapters, Authenticator authenticator, GatewayConfig config,
                      RestRoutes rest, Executor restExecutor, ConnectionLimits limits, AtomicInteger openStreams,
                      BooleanSupplier ready, Supplier<String> storeProblem, Supplier<String> clusterProblem,
                      String nodeId, ServerMetrics metrics, Supplier<String> scrape, Consumer<WebSocketConnection> onOpen,
                      PlaygroundFiles playground) {
        this.playground = playground;
        this.metrics = metrics;
        this.scrape = scrape;
        this.rest = rest;
        this.openStreams = openStreams;
        this.limits = limits;
        this.restExecutor = restExecutor;
        this.hub = hub;
        this.adapters = adapters;
        this.authenticator = authenticator;
        this.maxFrameBytes = config.maxFrameBytes();
        this.maxOutboundEvents = config.maxOutboundEvents();
        this.maxOutboundBytes = config.maxOutboundBytes();
        this.idleTimeoutSeconds = config.idleTimeoutSeconds();
        this.ready = ready;
        this.storeProblem = storeProblem;
        this.clusterProblem = clusterProblem;
        this.nodeId = nodeId;
        this.onOpen = onOpen;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!req.decoderResult().isSuccess()) {
            metrics.refused(ServerMetrics.INVALID_INPUT);
            sendError(ctx, req, HttpResponseStatus.BAD_REQUEST, "invalid_request", "the HTTP request is malformed");
            return;
        }
        QueryStringDecoder uri = new QueryStringDecoder(req.uri());
        String path;
        try {
            path = uri.path();
            uri.parameters();
        } catch (IllegalArgumentException badEscape) {
            // Not logged: the decoder's message quotes the query, which may hold a token.
            metrics.refused(ServerMetrics.INVALID_INPUT);
            sendError(ctx, req, HttpResponseStatus.BAD_REQUEST, "invalid_request",
                    "the request's URI has a malformed percent-escape");
            return;
        }
        if (scrape != null && path.equals("/metrics")) {
            serveMetrics(ctx, req);
            return;
        }
        if (playground != null && playground.serves(path)) {
            playground.serve(ctx, req, path);
            return;
        }
        if (limits.overTotal() && !path.equals("/healthz")) {
            tooMany(ctx, req, "the gateway has too many open connections; try again shortly");
            return;
        }
        if (!path.equals("/healthz") && clusterProblem.get() != null) {
            // Cut off from its cluster, this node would show a conversation without the other nodes' events.
            metrics.refused(ServerMetrics.UNAVAILABLE);
            sendError(ctx, req, HttpResponseStatus.SERVICE_UNAVAILABLE, "unavailable",
                    "this gateway node has lost its cluster; connect to another node or try again shortly",
                    res -> res.headers().set(HttpHeaderNames.RETRY_AFTER, "5"));
            return;
        }
        if (path.equals("/healthz")) {
            if (req.method() != HttpMethod.GET && req.method() != HttpMethod.HEAD) {
                sendError(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
                return;
            }
            String store = storeProblem.get();
            String cluster = clusterProblem.get();
            // Without its cluster a node cannot serve its share: the balancer should send clients elsewhere.
            boolean up = ready.getAsBoolean() && cluster == null;
            sendJson(ctx, req, up ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE, g -> {
                g.writeStartObject();
                g.writeStringField("status", up ? "ok" : "unavailable");
                g.writeNumberField("active_runs", hub.activeRuns());
                g.writeStringField("store", store == null ? "ok" : "unavailable");
                if (store != null) {
                    g.writeStringField("store_problem", store);
                }
                if (nodeId != null) {
                    g.writeStringField("node", nodeId);
                    g.writeStringField("cluster", cluster == null ? "ok" : "unavailable");
                    if (cluster != null) {
                        g.writeStringField("cluster_problem", cluster);
                    }
                }
                g.writeEndObject();
            });
            return;
        }
        var restMatch = rest.match(path);
        if (restMatch.isPresent()) {
            serveRest(ctx, req, uri, restMatch.get());
            return;
        }
        if (req.method() == HttpMethod.GET && !isUpgrade(req)) {
            var reattach = adapters.reattach(path);
            if (reattach.isPresent()) {
                reattach(ctx, req, uri, path, reattach.get().getKey(), reattach.get().getValue());
                return;
            }
        }
        var http = adapters.forHttpPath(path);
        if (http.isPresent() && !isUpgrade(req)) {
            if (req.method() != HttpMethod.POST) {
                sendError(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed",
                        "use POST " + path + " with a JSON body");
                return;
            }
            exchange(ctx, req, uri, path, http.get());
            return;
        }
        List<WireAdapter> dialects = adapters.forPath(path);
        if (!dialects.isEmpty()) {
            upgrade(ctx, req, uri, path);
            return;
        }
        sendError(ctx, req, HttpResponseStatus.NOT_FOUND, "not_found", "no route for " + path);
    }

    /** Hands a request to a REST service off the event loop and writes its answer back on it. */
    private void serveRest(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, RestRoutes.Match m) {
        Map<String, String> headers = new HashMap<>();
        req.headers().forEach(h -> headers.put(h.getKey().toLowerCase(Locale.ROOT), h.getValue()));
        boolean loopback = ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                && a.getAddress().isLoopbackAddress();
        RestRequest request = new RestRequest(req.method().name(), m.prefix(), uri.path().substring(m.prefix().length()),
                uri.parameters(), headers, req.content().toString(StandardCharsets.UTF_8), loopback);
        FullHttpRequest head = new DefaultFullHttpRequest(req.protocolVersion(), req.method(), req.uri(),
                Unpooled.EMPTY_BUFFER, req.headers().copy(), req.trailingHeaders().copy());
        CompletableFuture.supplyAsync(() -> m.service().handle(request), restExecutor)
                .thenCompose(stage -> stage)
                .whenComplete((res, failure) -> ctx.executor().execute(() -> {
                    if (failure != null) {
                        log.error("REST {} {} failed", req.method(), uri.path(), failure);
                        sendError(ctx, head, HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCode.INTERNAL.wireCode(),
                                "the request could not be handled");
                        return;
                    }
                    sendJson(ctx, head, HttpResponseStatus.valueOf(res.status()),
                            r -> res.headers().forEach((k, v) -> r.headers().set(k, v)),
                            g -> g.writeRawValue(res.json()));
                }));
    }

    /** The key a client's limits count against: its principal, or its address when anonymous. */
    static String clientKey(ChannelHandlerContext ctx, Principal principal) {
        if (!principal.anonymous()) {
            return "principal:" + principal.id();
        }
        return ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                ? "address:" + a.getAddress().getHostAddress() : "address:unknown";
    }

    private void tooMany(ChannelHandlerContext ctx, FullHttpRequest req, String message) {
        metrics.refused(ServerMetrics.CONNECTION_LIMIT);
        sendError(ctx, req, HttpResponseStatus.TOO_MANY_REQUESTS, ErrorCode.RATE_LIMITED.wireCode(), message,
                r -> r.headers().set(HttpHeaderNames.RETRY_AFTER, "1"));
    }

    private static boolean isUpgrade(FullHttpRequest req) {
        return req.headers().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
    }

    private void exchange(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, String path,
                          WireAdapter dialect) {
        startExchange(ctx, req, uri, path, dialect, null);
    }

    /**
     * Answers one HTTP exchange of a dialect: the body is decoded, or, for a reattach, the
     * commands are given ({@code given} non-null, nothing decoded).
     */
    private void startExchange(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, String path,
                               WireAdapter dialect, Decoded.Commands given) {
        if (current != null) {
            sendError(ctx, req, HttpResponseStatus.CONFLICT, "request_in_progress",
                    "this connection is still streaming the previous response");
            return;
        }
        Principal principal = authenticate(ctx, req, uri);
        if (principal == null) {
            return;
        }
        String client = clientKey(ctx, principal);
        withPlace(ctx, req, client, () -> openExchange(ctx, req, uri, path, dialect, given, principal, client));
    }

    private void openExchange(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, String path,
                              WireAdapter dialect, Decoded.Commands given, Principal principal, String client) {
        HttpExchange exchange = dialect.newExchange(new SessionContext(Ids.next("req"), principal, path,
                uri.parameters()));
        Decoded decoded = given != null ? given : exchange.decode(req.content().toString(StandardCharsets.UTF_8));
        HttpStream stream = new HttpStream(hub, ctx, exchange, principal, client, dialect.answersApprovals(),
                HttpUtil.isKeepAlive(req), maxOutboundEvents, maxOutboundBytes, dialect.id(), metrics,
                traceparent(req), () -> {
                    current = null;
                    limits.release(client);
                    openStreams.decrementAndGet();
                });
        current = stream;
        openStreams.incrementAndGet();
        if (decoded instanceof Decoded.Failure f) {
            log.debug("bad {} request on {}: {}", dialect.id(), path, f.error().message());
            metrics.refused(ServerMetrics.INVALID_INPUT);
            stream.refuse(f.error());
        } else {
            stream.start((Decoded.Commands) decoded);
        }
    }

    /**
     * The principal of a request: from {@code Authorization: Bearer} or the {@code token} query
     * parameter. Null, after answering 401, when authentication is on and the token is refused.
     */
    private Principal authenticate(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        String token = null;
        String header = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            token = header.substring(7).strip();
        } else {
            List<String> q = uri.parameters().get("token");
            if (q != null && !q.isEmpty()) {
                token = q.get(0);
            }
        }
        Authenticator.Result r = authenticator.authenticate(token);
        if (r instanceof Authenticator.Result.Accepted a) {
            return a.principal();
        }
        String reason = ((Authenticator.Result.Refused) r).reason();
        log.debug("refused {} {}: {}", req.method(), uri.path(), reason);
        metrics.refused(ServerMetrics.AUTH);
        sendError(ctx, req, HttpResponseStatus.UNAUTHORIZED, ErrorCode.AUTH_FAILED.wireCode(), reason,
                res -> res.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer"));
        return null;
    }

    /**
     * A client reattaching to a conversation's event stream: from its {@code Last-Event-ID} (or
     * {@code ?last_event_id=}), else the active or last run from its start.
     */
    private void reattach(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, String path,
                          WireAdapter dialect, String conversationId) {
        String cursor = req.headers().get("Last-Event-ID");
        if (cursor == null) {
            List<String> q = uri.parameters().get("last_event_id");
            cursor = q == null || q.isEmpty() ? null : q.get(0);
        }
        long after = Command.Subscribe.LAST_RUN;
        if (cursor != null) {
            try {
                after = Long.parseLong(cursor.strip());
            } catch (NumberFormatException e) {
                after = -1;
            }
            if (after < 0) {
                sendError(ctx, req, HttpResponseStatus.BAD_REQUEST, ErrorCode.INVALID_FIELD.wireCode(),
                        "Last-Event-ID must be the non-negative id of the last event received");
                return;
            }
        }
        startExchange(ctx, req, uri, path, dialect,
                new Decoded.Commands(List.of(new Command.Subscribe(conversationId, after, false))));
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (current != null) {
            current.writabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (current != null) {
            current.closed();
            current = null;
        }
        ctx.fireChannelInactive();
    }

    private void upgrade(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, String path) {
        if (!isUpgrade(req)) {
            sendError(ctx, req, HttpResponseStatus.UPGRADE_REQUIRED, "upgrade_required",
                    path + " is a WebSocket endpoint; connect with a WebSocket client");
            return;
        }
        String subprotocols = adapters.subprotocolsOf(path);
        WebSocketDecoderConfig decoderConfig = WebSocketDecoderConfig.newBuilder()
                .maxFramePayloadLength(maxFrameBytes)
                .allowExtensions(false)
                .closeOnProtocolViolation(true)
                .build();
        WebSocketServerHandshakerFactory factory = new WebSocketServerHandshakerFactory(
                "ws://" + req.headers().get(HttpHeaderNames.HOST, "localhost") + path, subprotocols, decoderConfig);
        WebSocketServerHandshaker handshaker = factory.newHandshaker(req);
        if (handshaker == null) {
            WebSocketServerHandshakerFactory.sendUnsupportedVersionResponse(ctx.channel())
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        String requested = req.headers().get(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL);
        WireAdapter chosen = null;
        if (requested != null) {
            for (String p : requested.split(",")) {
                chosen = adapters.bySubprotocol(path, p.strip()).orElse(null);
                if (chosen != null) {
                    break;
                }
            }
        }
        if (chosen == null && adapters.forPath(path).size() == 1) {
            chosen = adapters.forPath(path).get(0);
        }
        if (chosen == null) {
            List<WireAdapter> named = adapters.byConversationParameter(path, uri.parameters());
            if (named.size() > 1) {
                sendError(ctx, req, HttpResponseStatus.BAD_REQUEST, "invalid_request", "the query names the "
                        + "conversation of " + named.size() + " dialects (" + describeParameters(named)
                        + "); name one, or choose the dialect with Sec-WebSocket-Protocol");
                return;
            }
            if (named.size() == 1) {
                chosen = named.get(0);
            }
        }
        Principal principal = authenticate(ctx, req, uri);
        if (principal == null) {
            return;
        }
        if (chosen != null) {
            GatewayError refusal = chosen.refuseUpgrade(new SessionContext("", principal, path, uri.parameters()));
            if (refusal != null) {
                ErrorCode code = refusal.code();
                int status = code == ErrorCode.MISSING_FIELD || code == ErrorCode.INVALID_FIELD ? 400 : code.httpStatus();
                log.debug("refused a {} upgrade on {}: {}", chosen.id(), path, refusal.message());
                metrics.refused(ServerMetrics.INVALID_INPUT);
                sendError(ctx, req, HttpResponseStatus.valueOf(status), "invalid_request", refusal.message());
                return;
            }
        }
        String client = clientKey(ctx, principal);
        WireAdapter dialect = chosen;
        ConnectionLimits places = limits;
        withPlace(ctx, req, client, () -> {
            // Not this router's field: the listener lives as long as the connection, which the router
            // leaves once it is upgraded, and would keep it.
            ctx.channel().closeFuture().addListener(f -> places.release(client));
            openWebSocket(ctx, req, uri, path, handshaker, principal, client, dialect);
        });
    }

    /**
     * Runs {@code then} on the channel's event loop once the client has a place (see
     * {@link ConnectionLimits#acquire}); else answers 429. In a cluster the answer comes from Redis: the
     * channel reads nothing meanwhile and the request is kept until then.
     */
    private void withPlace(ChannelHandlerContext ctx, FullHttpRequest req, String client, Runnable then) {
        CompletableFuture<Boolean> place = limits.acquire(client);
        if (place.isDone()) {
            answerPlace(ctx, req, place.join(), then);
            return;
        }
        req.retain();
        ctx.channel().config().setAutoRead(false);
        place.whenComplete((taken, e) -> ctx.executor().execute(() -> {
            try {
                ctx.channel().config().setAutoRead(true);
                if (ctx.channel().isActive()) {
                    answerPlace(ctx, req, e == null && taken, then);
                } else if (e == null && taken) {
                    limits.release(client);
                }
            } finally {
                req.release();
            }
        }));
    }

    private void answerPlace(ChannelHandlerContext ctx, FullHttpRequest req, boolean taken, Runnable then) {
        if (taken) {
            then.run();
        } else {
            tooMany(ctx, req, "more than " + Plural.of(limits.maxPerClient(), "open connection") + " of this client");
        }
    }

    private void openWebSocket(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri, String path,
                               WebSocketServerHandshaker handshaker, Principal principal, String client,
                               WireAdapter chosen) {
        WebSocketConnection conn = new WebSocketConnection(hub, adapters, path, uri.parameters(), principal, client,
                chosen, maxOutboundEvents, maxOutboundBytes, metrics, traceparent(req));
        ctx.pipeline().addLast("ws-idle", new IdleStateHandler(idleTimeoutSeconds, 0, 0));
        ctx.pipeline().addLast("ws-aggregator", new WebSocketFrameAggregator(maxFrameBytes));
        ctx.pipeline().addLast("ws-connection", conn);
        handshaker.handshake(ctx.channel(), req).addListener(f -> {
            if (f.isSuccess()) {
                ctx.pipeline().remove(this);
                onOpen.accept(conn);
                conn.opened();
            } else {
                log.debug("WebSocket handshake on {} failed: {}", path, f.cause().toString());
                ctx.close();
            }
        });
    }

    /**
     * The request's W3C {@code traceparent}, which the runs it asks for join; null when absent or
     * longer than any valid one (the propagator checks the rest).
     */
    private static String traceparent(FullHttpRequest req) {
        String v = req.headers().get("traceparent");
        return v == null || v.length() > 128 ? null : v.strip();
    }

    /** Answers {@code GET /metrics} with every meter in the Prometheus text format. */
    private void serveMetrics(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (req.method() != HttpMethod.GET && req.method() != HttpMethod.HEAD) {
            sendError(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "use GET");
            return;
        }
        boolean head = req.method() == HttpMethod.HEAD;
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        // Off the event loop: a scrape reads every meter, histograms too.
        CompletableFuture.supplyAsync(() -> scrape.get().getBytes(StandardCharsets.UTF_8), restExecutor)
                .whenComplete((text, failure) -> ctx.executor().execute(() -> {
                    if (failure != null) {
                        log.error("GET /metrics failed", failure);
                        ctx.close();
                        return;
                    }
                    FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(text));
                    res.headers().set(HttpHeaderNames.CONTENT_TYPE, METRICS_CONTENT_TYPE);
                    HttpUtil.setContentLength(res, text.length);
                    HttpUtil.setKeepAlive(res, keepAlive);
                    var f = ctx.writeAndFlush(res);
                    if (!keepAlive) {
                        f.addListener(ChannelFutureListener.CLOSE);
                    }
                }));
    }

    /** The Prometheus text exposition format's media type. */
    public static final String METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** "session_id of hai, threadId of agui": what each dialect's parameter is. */
    private static String describeParameters(List<WireAdapter> dialects) {
        return dialects.stream().map(a -> a.conversationParameter().orElseThrow() + " of " + a.id())
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /** Answers {@code {"error":{"code","message"}}} with the status. */
    static void sendError(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String code,
                          String message) {
        sendError(ctx, req, status, code, message, res -> { });
    }

    static void sendError(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String code,
                          String message, Consumer<FullHttpResponse> headers) {
        sendJson(ctx, req, status, headers, g -> {
            g.writeStartObject();
            g.writeObjectFieldStart("error");
            g.writeStringField("code", code);
            g.writeStringField("message", message);
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    /** Body writer for {@link #sendJson}. */
    @FunctionalInterface
    interface JsonBody {
        void write(JsonGenerator g) throws IOException;
    }

    static void sendJson(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, JsonBody body) {
        sendJson(ctx, req, status, res -> { }, body);
    }

    static void sendJson(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status,
                         Consumer<FullHttpResponse> headers, JsonBody body) {
        ByteBuf buf = ctx.alloc().buffer();
        try (JsonGenerator g = Json.FACTORY.createGenerator((OutputStream) new ByteBufOutputStream(buf))) {
            body.write(g);
        } catch (IOException e) {
            buf.release();
            throw new IllegalStateException("cannot encode a response", e);
        }
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, buf);
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
        HttpUtil.setContentLength(res, buf.readableBytes());
        // A refused WebSocket upgrade ends the connection: the client asked for no further HTTP on it.
        boolean keepAlive = HttpUtil.isKeepAlive(req) && !isUpgrade(req);
        HttpUtil.setKeepAlive(res, keepAlive);
        headers.accept(res);
        if (req.method() == HttpMethod.HEAD) {
            res.content().clear();
        }
        var f = ctx.writeAndFlush(res);
        if (!keepAlive) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("HTTP connection error: {}", cause.getMessage());
        } else {
            log.warn("HTTP handler failed", cause);
        }
        ctx.close();
    }
}
