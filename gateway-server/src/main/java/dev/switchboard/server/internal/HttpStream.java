package dev.switchboard.server.internal;

import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.HttpExchange;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;

/**
 * One HTTP request of a dialect served over HTTP, as a hub subscriber. The response head waits
 * for the first frame: an error answered before it becomes the whole response with the error's
 * status; otherwise the answer is {@code 200} and either a stream of server-sent events
 * ({@code data: <json>} and a blank line, LF only) or one JSON body.
 */
final class HttpStream implements Subscriber {
    private static final Logger log = LoggerFactory.getLogger(HttpStream.class);
    private static final byte[] SSE_PREFIX = "data: ".getBytes(StandardCharsets.US_ASCII);
    /**
     * The seq of the event being encoded on a stream (0: none), and its newest SSE event (a
     * {@link PendingFrames#scratch} buffer), held back for the id.
     */
    private long eventSeq;
    private ByteBuf lastOfEvent;
    private static final byte[] SSE_SUFFIX = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private final ConversationHub hub;
    private final ChannelHandlerContext ctx;
    private final HttpExchange exchange;
    private final Principal principal;
    private final boolean keepAlive;
    private final boolean answersApprovals;
    private final String clientKey;
    private final Outbox outbox;
    /** Frames of the event stream ({@code data:} events), when the exchange streams. */
    private final NettyFrameWriter streamWriter;
    /** A whole JSON body: an error before the stream, or a non-streaming answer. */
    private final NettyFrameWriter bodyWriter;
    private final Runnable onEnd;
    private final String dialect;
    private final ServerMetrics metrics;
    /** The request's {@code traceparent}, or null. */
    private final String traceparent;
    /** {@code sse} for a streamed answer, {@code http} for a whole one. */
    private final String transport;
    /** Where the stream's chunks are written; looked up with the first. */
    private ChannelHandlerContext chunkContext;
    /**
     * The stream's chunks written and not yet handed to the channel: a drain's leave as one buffer.
     * Empty between the tasks of the event loop (each that writes ends with {@link #flushFrames}).
     */
    private final PendingFrames pending;
    private GatewayError pendingError;
    private boolean headSent;
    private boolean streamStarted;
    private boolean ended;

    HttpStream(ConversationHub hub, ChannelHandlerContext ctx, HttpExchange exchange, Principal principal,
               String clientKey, boolean answersApprovals, boolean keepAlive, int maxOutboundEvents, long maxOutboundBytes,
               String dialect, ServerMetrics metrics, String traceparent, Runnable onEnd) {
        this.answersApprovals = answersApprovals;
        this.traceparent = traceparent;
        this.dialect = dialect;
        this.metrics = metrics;
        this.transport = exchange.streaming() ? "sse" : "http";
        this.clientKey = clientKey;
        this.hub = hub;
        this.ctx = ctx;
        this.exchange = exchange;
        this.principal = principal;
        this.keepAlive = keepAlive;
        this.onEnd = onEnd;
        this.outbox = new Outbox(maxOutboundEvents, maxOutboundBytes, this::encode, this::takeIn, null,
                this::flushFrames);
        this.pending = new PendingFrames(ctx);
        this.bodyWriter = new NettyFrameWriter(ctx, new byte[0], new byte[0], this::sendBody);
        this.streamWriter = exchange.streaming()
                ? new NettyFrameWriter(ctx, WireFraming.SSE_CHUNK_HEADROOM, SSE_PREFIX, SSE_SUFFIX, this::sendEvent,
                        capacity -> PendingFrames.scratch(lastOfEvent, capacity))
                : bodyWriter;
        outbox.bind(ctx);
        outbox.meter(metrics.delivery(dialect));
        metrics.opened(dialect, transport);
    }

    /** Submits the decoded commands; on the event loop. */
    void start(Decoded.Commands commands) {
        outbox.resume();
        for (Command c : commands.commands()) {
            hub.submit(c, this);
        }
    }

    /** Answers a decoding failure as the whole response; on the event loop. */
    void refuse(GatewayError error) {
        answerError(error);
    }

    /** The exchange takes in an event its client was shown before it reattached; nothing is sent. */
    private void takeIn(Envelope e) {
        if (ended) {
            return;
        }
        try {
            exchange.prime(e);
        } catch (IOException | RuntimeException ex) {
            try (LogContext.Scope ids = LogContext.open(e.conversationId(), e.runId())) {
                log.error("HTTP encoder failed on {}", e.event().kind(), ex);
            }
        }
    }

    private void encode(Envelope e) {
        if (ended) {
            return;
        }
        // The event's seq is the SSE id of the last SSE event it becomes (SSE clients keep the
        // last id they saw): a client reattaches with Last-Event-ID after whole events only, and
        // one that lost the stream between two SSE events of one event gets that event again whole.
        eventSeq = exchange.streaming() ? e.seq() : 0;
        try {
            exchange.encode(e, streamWriter);
            if (lastOfEvent != null) {
                writeEvent(lastOfEvent, eventSeq);
            }
        } catch (IOException | RuntimeException ex) {
            // A frame held back is a scratch buffer (or, when not streaming, none): dropped, not released.
            streamWriter.abort();
            try (LogContext.Scope ids = LogContext.open(e.conversationId(), e.runId())) {
                log.error("HTTP encoder failed on {}", e.event().kind(), ex);
            }
        } finally {
            lastOfEvent = null;
            eventSeq = 0;
        }
        if (exchange.done()) {
            end();
        }
    }

    private void answerError(GatewayError error) {
        if (ended) {
            return;
        }
        pendingError = headSent ? null : error;
        NettyFrameWriter w = headSent ? streamWriter : bodyWriter;
        if (w == streamWriter && exchange.streaming()) {
            streamWriter.prefix(SSE_PREFIX);
        }
        try {
            exchange.encodeError(error, w);
        } catch (IOException | RuntimeException ex) {
            w.abort();
            log.error("HTTP error encoder failed", ex);
        }
        pendingError = null;
        if (exchange.done()) {
            end();
        } else {
            flushFrames();
        }
    }

    /** Sends a whole JSON body: the error's status before the stream began, else 200. */
    private void sendBody(ByteBuf body) {
        if (headSent) {
            body.release();
            throw new IllegalStateException("a JSON body after the response began");
        }
        HttpResponseStatus status = pendingError != null
                ? HttpResponseStatus.valueOf(pendingError.code().httpStatus()) : HttpResponseStatus.OK;
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        if (pendingError != null && pendingError.details().containsKey("retry_after_seconds")) {
            res.headers().set(HttpHeaderNames.RETRY_AFTER, pendingError.details().get("retry_after_seconds"));
        }
        HttpUtil.setContentLength(res, body.readableBytes());
        HttpUtil.setKeepAlive(res, keepAlive);
        headSent = true;
        ctx.write(res);
    }

    /** Sends one server-sent event, after the response head if it is the first. */
    private void sendEvent(ByteBuf event) {
        if (eventSeq > 0) {
            if (lastOfEvent != null) {
                writeEvent(lastOfEvent, 0);
            }
            lastOfEvent = event;
        } else {
            writeEvent(event, 0);
        }
    }

    /** Writes one SSE event, with {@code id: <seq>} first when {@code seq} is above 0. */
    private void writeEvent(ByteBuf event, long seq) {
        if (!headSent) {
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
            head.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
            head.headers().set("X-Accel-Buffering", "no");
            HttpUtil.setTransferEncodingChunked(head, true);
            HttpUtil.setKeepAlive(head, keepAlive);
            headSent = true;
            streamStarted = true;
            ctx.write(head);
        }
        // The writer leaves SSE_CHUNK_HEADROOM in front of every frame: framed where it is, never
        // copied (which would release the scratch buffer).
        ByteBuf chunk = WireFraming.sseChunk(event, seq);
        outbox.wrote(chunk.readableBytes());
        pending.add(chunk);
        if (pending.full()) {
            writePending();
        }
    }

    /**
     * Hands the pending chunks to the channel, unflushed. Already chunks: written past the HTTP
     * encoder, which would frame them again. The response's head went through the encoder before
     * them, and its last chunk does after them, which ends the body there.
     */
    private void writePending() {
        ByteBuf chunks = pending.take();
        if (chunks != null) {
            chunkContext().write(chunks, ctx.voidPromise());
        }
    }

    /** Hands the pending chunks to the channel and flushes it: how every task that wrote ends. */
    private void flushFrames() {
        writePending();
        ctx.flush();
    }

    /** The HTTP codec's context: a write there starts past the codec. */
    private ChannelHandlerContext chunkContext() {
        if (chunkContext == null) {
            chunkContext = ctx.pipeline().context(HttpServerCodec.class);
            if (chunkContext == null) {
                throw new IllegalStateException("an SSE stream without an HTTP codec in its pipeline");
            }
        }
        return chunkContext;
    }

    void writabilityChanged() {
        if (ctx.channel().isWritable()) {
            outbox.drain();
        }
    }

    /** Ends the response and leaves the hub; on the event loop. */
    private void end() {
        if (ended) {
            return;
        }
        ended = true;
        outbox.close();
        hub.disconnected(this);
        writePending();
        var done = streamStarted
                ? ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT)
                : ctx.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER);
        if (!keepAlive) {
            done.addListener(ChannelFutureListener.CLOSE);
        }
        metrics.closed(dialect, transport, "end");
        onEnd.run();
    }

    /** The client went away before the end: leave the hub (any run goes on). */
    void closed() {
        if (!ended) {
            ended = true;
            outbox.close();
            pending.release();
            hub.disconnected(this);
            metrics.closed(dialect, transport, "client");
            onEnd.run();
        }
    }

    // ---- Subscriber ----------------------------------------------------------------------

    @Override
    public Principal principal() {
        return principal;
    }

    @Override
    public String clientKey() {
        return clientKey;
    }

    @Override
    public boolean answersApprovals() {
        return answersApprovals;
    }

    @Override
    public boolean deliver(Envelope envelope) {
        return outbox.offer(envelope);
    }

    @Override
    public void prime(java.util.List<Envelope> shown) {
        outbox.prime(shown);
    }

    /** A reattach from a cursor with nothing after it and no run active: 204, nothing to resume. */
    @Override
    public void caughtUp() {
        ctx.executor().execute(() -> {
            if (!ended && !headSent) {
                FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT);
                HttpUtil.setKeepAlive(res, keepAlive);
                headSent = true;
                ctx.write(res);
                end();
            }
        });
    }

    @Override
    public String dialect() {
        return dialect;
    }

    /** The stream's event loop, which writes its events. */
    @Override
    public Executor executor() {
        return ctx.channel().eventLoop();
    }

    @Override
    public String traceparent() {
        return traceparent;
    }

    @Override
    public void overflowed() {
        if (outbox.overflowed()) {
            ctx.executor().execute(this::tooSlow);
        }
    }

    /** The client does not read fast enough: the stream ends; it may reattach from its last event id. */
    private void tooSlow() {
        log.info("an HTTP stream fell more than {} bytes behind; ending it", outbox.maxBytes());
        if (!ended) {
            ended = true;
            outbox.close();
            pending.release();
            hub.disconnected(this);
            ctx.close();
            metrics.closed(dialect, transport, "slow");
            onEnd.run();
        }
    }

    @Override
    public void reject(GatewayError error) {
        ctx.executor().execute(() -> answerError(error));
    }
}
