package dev.switchboard.runtime.openai;

import dev.switchboard.core.UpstreamHttp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One streamed {@code POST} to the model server, read on an event loop ({@link LoopUpstream}): its
 * {@code text/event-stream} answer is decoded into events as its bytes arrive and handed to the
 * listener on that loop. Whatever goes wrong on the way (a connection that fails, an HTTP error
 * status, a body that is not an event stream, a server silent for longer than the timeout, first
 * before its answer and then between events) is reported once, as {@link Listener#onFailure}, with
 * a message for the operator. A request sent on a kept-alive connection that the server closed
 * before answering is sent again once, on a new connection.
 *
 * <p>Its state is the loop's alone: {@link #done} and {@link #fail} are for the listener, which is
 * called there; {@link #cancel} may come from any thread.
 */
final class LoopStream {
    /** What the owner of a stream hears, on the stream's loop; nothing after a failure or {@link #done}. */
    interface Listener {
        /** One event of the stream, read during this call only (see {@link UpstreamHttp.SseView}). */
        void onEvent(LoopStream stream, UpstreamHttp.SseView event);

        /** The body ended with no failure; the listener decides whether the answer was whole. */
        void onEnd(LoopStream stream);

        /** The stream failed; {@code httpStatus} is the upstream's status, or 0 when it gave none. */
        void onFailure(String message, int httpStatus);
    }

    /** How often a stream paused for a store that is behind looks again. */
    private static final long PAUSE_CHECK_MILLIS = 1;

    private final LoopUpstream upstreams;
    private final EventLoop loop;
    private final URI uri;
    private final boolean secure;
    private final String origin;
    private final byte[] body;
    private final List<Map.Entry<String, String>> headers;
    private final String upstream;
    private final Duration timeout;
    private final BooleanSupplier backedUp;
    private final Listener listener;

    private Channel channel;
    private boolean over;
    private boolean answered;
    private boolean reused;
    private long lastActivity;
    private ScheduledFuture<?> watchdog;

    private LoopStream(LoopUpstream upstreams, EventLoop loop, URI uri, byte[] body,
                       List<Map.Entry<String, String>> headers, String upstream, Duration timeout,
                       BooleanSupplier backedUp, Listener listener) {
        this.upstreams = upstreams;
        this.loop = loop;
        this.uri = uri;
        this.secure = "https".equalsIgnoreCase(uri.getScheme());
        this.origin = (secure ? "https://" : "http://") + uri.getHost() + ":" + port(uri);
        this.body = body;
        this.headers = headers;
        this.upstream = upstream;
        this.timeout = timeout;
        this.backedUp = backedUp;
        this.listener = listener;
    }

    /**
     * Sends {@code body} to {@code uri} with {@code headers} (besides {@code Host} and
     * {@code Content-Length}) on {@code loop} and streams the answer to {@code listener}.
     * {@code upstream} names the other side in messages, such as "the model server at http://…";
     * while {@code backedUp} holds, the answer is not read on.
     */
    static LoopStream open(LoopUpstream upstreams, EventLoop loop, URI uri, byte[] body,
                           List<Map.Entry<String, String>> headers, String upstream, Duration timeout,
                           BooleanSupplier backedUp, Listener listener) {
        LoopStream s = new LoopStream(upstreams, loop, uri, body, headers, upstream, timeout, backedUp, listener);
        if (loop.inEventLoop()) {
            s.begin();
        } else {
            try {
                loop.execute(s::begin);
            } catch (RejectedExecutionException stopping) {
                s.over = true;
                listener.onFailure("the gateway is stopping", 0);
            }
        }
        return s;
    }

    private static int port(URI uri) {
        return uri.getPort() >= 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    private void begin() {
        if (over) {
            return;
        }
        lastActivity = System.nanoTime();
        watch(timeout.toNanos());
        Channel idle = upstreams.take(loop, origin);
        if (idle != null) {
            reused = true;
            send(idle);
        } else {
            connect();
        }
    }

    /** Opens a new connection: a host name is looked up off the loop (it may block), an address or localhost is not. */
    private void connect() {
        String host = uri.getHost();
        int port = port(uri);
        if (UpstreamHttp.needsNoLookup(uri)) {
            connectTo(new InetSocketAddress(host, port));
            return;
        }
        Runnable lookUp = () -> {
            InetSocketAddress address = new InetSocketAddress(host, port);
            try {
                loop.execute(() -> {
                    if (address.isUnresolved()) {
                        fail("cannot find the host " + host + " of " + upstream + "; is its URL right?", 0);
                    } else {
                        connectTo(address);
                    }
                });
            } catch (RejectedExecutionException stopped) {
                // The gateway is stopping; its runs end with it.
            }
        };
        try {
            upstreams.lookups().execute(lookUp);
        } catch (RejectedExecutionException stopping) {
            fail("the gateway is stopping", 0);
        }
    }

    private void connectTo(InetSocketAddress address) {
        if (over) {
            return;
        }
        Reader reader = new Reader(upstreams, loop, origin);
        upstreams.connect(loop, address, uri.getHost(), secure, reader).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                fail(UpstreamHttp.describe(f.cause(), upstream, timeout), 0);
            } else if (over) {
                f.channel().close();
            } else {
                send(f.channel());
            }
        });
    }

    private void send(Channel c) {
        channel = c;
        c.pipeline().get(Reader.class).attach(this);
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path,
                Unpooled.wrappedBuffer(body));
        request.headers().set(HttpHeaderNames.HOST, uri.getPort() >= 0 ? uri.getHost() + ":" + uri.getPort() : uri.getHost());
        for (Map.Entry<String, String> h : headers) {
            request.headers().set(h.getKey(), h.getValue());
        }
        HttpUtil.setContentLength(request, body.length);
        c.writeAndFlush(request).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                lost(f.cause());
            }
        });
    }

    /** The connection failed or closed before the answer ended; a reused one that never answered is replaced once. */
    private void lost(Throwable cause) {
        if (over) {
            return;
        }
        dropConnection();
        if (reused && !answered) {
            reused = false;
            connect();
            return;
        }
        fail(UpstreamHttp.describe(cause, upstream, timeout), 0);
    }

    /**
     * Ends the stream well: the listener hears nothing more. True the first time. The rest of the
     * body is read, so the connection can serve another request; one whose server goes silent
     * before the body ends is closed after the timeout.
     */
    boolean done() {
        if (over) {
            return false;
        }
        over = true;
        return true;
    }

    /** Fails the stream: drops the connection and reports the message, once. */
    void fail(String message, int httpStatus) {
        if (over) {
            return;
        }
        over = true;
        stopWatching();
        dropConnection();
        listener.onFailure(message, httpStatus);
    }

    /** Drops the connection and reports nothing; from any thread. */
    void cancel() {
        if (loop.inEventLoop()) {
            over = true;
            stopWatching();
            dropConnection();
            return;
        }
        try {
            loop.execute(this::cancel);
        } catch (RejectedExecutionException stopped) {
            // The loop has stopped, and closed the connection with it.
        }
    }

    private void dropConnection() {
        Channel c = channel;
        channel = null;
        if (c != null) {
            c.pipeline().get(Reader.class).detach();
            c.close();
        }
    }

    private void watch(long delayNanos) {
        watchdog = loop.schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void check() {
        watchdog = null;
        if (over && channel == null) {
            return;
        }
        long limit = timeout.toNanos();
        long quiet = System.nanoTime() - lastActivity;
        if (quiet < limit) {
            watch(limit - quiet);
        } else if (over) {
            dropConnection();
        } else if (!answered) {
            fail(upstream + " did not answer within " + timeout.toSeconds() + " s (--upstream-timeout-seconds)", 0);
        } else {
            fail(upstream + " sent nothing for " + timeout.toSeconds()
                    + " s in the middle of its answer (--upstream-timeout-seconds)", 0);
        }
    }

    private void stopWatching() {
        if (watchdog != null) {
            watchdog.cancel(false);
            watchdog = null;
        }
    }

    /** Reads on after a pause for a store that was behind, once it no longer is. */
    private void readOnWhenRoom() {
        Channel c = channel;
        if (c == null || !c.isActive()) {
            return;
        }
        // The pause is the store's, not the server's silence.
        lastActivity = System.nanoTime();
        if (backedUp.getAsBoolean()) {
            loop.schedule(this::readOnWhenRoom, PAUSE_CHECK_MILLIS, TimeUnit.MILLISECONDS);
            return;
        }
        c.config().setAutoRead(true);
    }

    /**
     * Reads the answers of one connection: the head, then the body as an event stream
     * ({@link UpstreamHttp.SseLines}), or an error body up to a bound. Once an answer's body has
     * ended, a connection the server keeps alive goes back to the pool.
     */
    static final class Reader extends SimpleChannelInboundHandler<HttpObject> {
        private final LoopUpstream upstreams;
        private final EventLoop loop;
        private final String origin;
        private LoopStream stream;
        /** When the connection went back to the pool ({@link LoopUpstream#park}). */
        long parkedAt;
        private UpstreamHttp.SseLines lines;
        /** Hands an event to the stream's listener, unless the stream is over. */
        private final Consumer<UpstreamHttp.SseView> deliver = event -> {
            LoopStream s = stream;
            if (s != null && !s.over) {
                s.listener.onEvent(s, event);
            }
        };
        /** Whether a stream still reads this connection (a failure in the listener detaches it). */
        private final BooleanSupplier attached = () -> stream != null;
        private int status;
        private boolean keepAlive;
        private String location;
        /** The body of an answer that is not 2xx, up to {@link UpstreamHttp#MAX_ERROR_BODY_BYTES}; null otherwise. */
        private ByteArrayOutputStream error;

        Reader(LoopUpstream upstreams, EventLoop loop, String origin) {
            this.upstreams = upstreams;
            this.loop = loop;
            this.origin = origin;
        }

        void attach(LoopStream s) {
            stream = s;
        }

        void detach() {
            stream = null;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            LoopStream s = stream;
            if (s == null) {
                // An idle connection has nothing to say; a dropped one is closing.
                ctx.close();
                return;
            }
            if (msg.decoderResult().isFailure()) {
                s.lost(msg.decoderResult().cause());
                return;
            }
            s.lastActivity = System.nanoTime();
            if (msg instanceof HttpResponse r) {
                head(s, r);
                if (stream == null) {
                    return;
                }
            }
            if (msg instanceof HttpContent content) {
                if (error != null) {
                    // Bytes, decoded once whole: a chunk may end inside a character.
                    ByteBuf b = content.content();
                    int room = UpstreamHttp.MAX_ERROR_BODY_BYTES - error.size();
                    error.writeBytes(ByteBufUtil.getBytes(b, b.readerIndex(), Math.min(room, b.readableBytes())));
                    if (msg instanceof LastHttpContent || error.size() >= UpstreamHttp.MAX_ERROR_BODY_BYTES) {
                        failWithStatus(s);
                    }
                    return;
                }
                try {
                    ByteBuf b = content.content();
                    if (b.isReadable()) {
                        lines.take(b.nioBuffer(), deliver, attached);
                    }
                } catch (IOException e) {
                    s.fail(UpstreamHttp.describe(e, s.upstream, s.timeout), 0);
                    return;
                }
                if (msg instanceof LastHttpContent) {
                    end(ctx, s);
                } else if (!s.over && ctx.channel().config().isAutoRead() && s.backedUp.getAsBoolean()) {
                    // One pause at a time: the rest of a read's messages still come while it lasts.
                    ctx.channel().config().setAutoRead(false);
                    loop.schedule(s::readOnWhenRoom, PAUSE_CHECK_MILLIS, TimeUnit.MILLISECONDS);
                }
            }
        }

        private void head(LoopStream s, HttpResponse r) {
            s.answered = true;
            status = r.status().code();
            keepAlive = HttpUtil.isKeepAlive(r);
            location = r.headers().get(HttpHeaderNames.LOCATION);
            error = null;
            if (status / 100 != 2) {
                error = new ByteArrayOutputStream();
                return;
            }
            String type = r.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
            if (!type.isEmpty() && !type.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
                s.fail(s.upstream + " answered POST " + UpstreamHttp.shown(s.uri) + " with " + type
                        + " instead of an event stream (text/event-stream)", 0);
                return;
            }
            lines = new UpstreamHttp.SseLines();
        }

        private void failWithStatus(LoopStream s) {
            String body = error.toString(StandardCharsets.UTF_8);
            String text = error.size() >= UpstreamHttp.MAX_ERROR_BODY_BYTES ? body + "…" : body;
            error = null;
            String redirect = status / 100 == 3 && location != null
                    ? " (a redirect to " + UpstreamHttp.shorten(location) + "; set the URL to where it points)" : "";
            s.fail(s.upstream + " answered HTTP " + status + " to POST " + UpstreamHttp.shown(s.uri) + ": "
                    + UpstreamHttp.errorText(text) + redirect, status);
        }

        /** The answer's body ended: what is pending is dispatched, the listener told, the connection kept or closed. */
        private void end(ChannelHandlerContext ctx, LoopStream s) {
            try {
                lines.end(deliver);
            } catch (IOException e) {
                s.fail(UpstreamHttp.describe(e, s.upstream, s.timeout), 0);
                return;
            }
            if (stream != s) {
                // The listener failed the stream on its last event, and dropped the connection.
                return;
            }
            boolean told = s.over;
            stream = null;
            s.channel = null;
            s.stopWatching();
            if (!told) {
                s.listener.onEnd(s);
            }
            if (keepAlive && ctx.channel().isActive()) {
                // A pause may still hold (the answer's last messages came from one read): idle, the
                // connection must see the server close it.
                ctx.channel().config().setAutoRead(true);
                upstreams.park(loop, origin, ctx.channel());
            } else {
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            LoopStream s = stream;
            stream = null;
            if (s != null) {
                s.lost(new IOException("the server closed the connection before the answer ended"));
            } else {
                upstreams.forget(loop, origin, ctx.channel());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LoopStream s = stream;
            Throwable why = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
            if (s != null) {
                s.lost(why);
            } else {
                ctx.close();
            }
        }
    }
}
