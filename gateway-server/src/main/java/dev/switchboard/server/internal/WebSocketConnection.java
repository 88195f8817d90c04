package dev.switchboard.server.internal;

import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.Cursors;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.core.spi.WireAdapter;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.Map;

/**
 * One WebSocket connection of any dialect: decodes its frames into hub commands and encodes
 * the events the hub fans out to it. Events queue in a bounded outbox drained on the
 * channel's event loop while the channel is writable; a connection whose outbox overflows
 * is closed with 1013 (try again later) so one slow reader cannot hold memory or slow others.
 */
public final class WebSocketConnection extends SimpleChannelInboundHandler<WebSocketFrame> implements Subscriber {
    private static final Logger log = LoggerFactory.getLogger(WebSocketConnection.class);
    private static final int CLOSE_TIMEOUT_SECONDS = 2;
    private static final byte[] SEQ_FIELD = "\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] METADATA_SEQ_FIELD = "\"metadata\":{\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private final ConversationHub hub;
    private final AdapterRegistry adapters;
    private final String path;
    private final Map<String, List<String>> query;
    private final Principal principal;
    private final String clientKey;
    private final String connectionId = Ids.next("conn");
    private final Outbox outbox;

    private volatile ChannelHandlerContext ctx;
    private volatile WireAdapter adapter;
    private DialectSession session;
    private NettyFrameWriter writer;
    /** The seq of the event being encoded, 0 for other frames; event loop only. */
    private long encodingSeq;
    /**
     * The newest frame of the event being encoded (a {@link PendingFrames#scratch} buffer), held back to carry
     * the cursor if it is the last.
     */
    private ByteBuf lastOfEvent;
    /**
     * Frames written and not yet handed to the channel: a drain's frames leave as one buffer, not
     * one buffer each. Empty between the tasks of the event loop (each that writes ends with
     * {@link #flushFrames}); event loop only.
     */
    private PendingFrames pending;
    private volatile boolean closed;
    private final ServerMetrics metrics;
    /** The upgrade request's {@code traceparent}, or null. */
    private final String traceparent;
    /** The close code this gateway sent, for metrics; null while it sent none. */
    private String closeCode;

    public WebSocketConnection(ConversationHub hub, AdapterRegistry adapters, String path,
                               Map<String, List<String>> query, Principal principal, String clientKey,
                               WireAdapter chosen,
                               int maxOutboundEvents, long maxOutboundBytes, ServerMetrics metrics,
                               String traceparent) {
        this.hub = hub;
        this.metrics = metrics;
        this.traceparent = traceparent;
        this.adapters = adapters;
        this.path = path;
        this.query = query;
        this.principal = principal;
        this.clientKey = clientKey;
        this.adapter = chosen;
        this.outbox = new Outbox(maxOutboundEvents, maxOutboundBytes, this::encode, this::takeIn, this::writeError,
                this::flushFrames);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.pending = new PendingFrames(ctx);
        this.writer = new NettyFrameWriter(ctx, WireFraming.WEBSOCKET_HEADROOM, new byte[0], new byte[0], frame -> {
            if (encodingSeq > 0 && adapter.cursorStyle() != Cursors.Style.NONE) {
                // Only an event's last frame carries its cursor (see encode): hold it until the next.
                if (lastOfEvent != null) {
                    append(lastOfEvent);
                }
                lastOfEvent = frame;
            } else {
                append(frame);
            }
        }, capacity -> PendingFrames.scratch(lastOfEvent, capacity));
        outbox.bind(ctx);
    }

    /** The handshake is done: start the dialect session if the dialect is already known. */
    public void opened() {
        if (adapter != null) {
            startSession(adapter);
        }
    }

    private void startSession(WireAdapter a) {
        adapter = a;
        session = a.newSession(new SessionContext(connectionId, principal, path, query));
        metrics.opened(a.id(), "websocket");
        outbox.meter(metrics.delivery(a.id()));
        log.debug("{} speaks {} on {}", connectionId, a.id(), path);
        try {
            session.opened(writer);
        } catch (IOException | RuntimeException e) {
            encoderFailed(e);
        }
        flushFrames();
        outbox.resume();
        for (Command c : session.openingCommands()) {
            hub.submit(c, this);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            log.debug("{} sent nothing for the idle timeout; closing it", connectionId);
            close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "idle timeout");
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
        if (frame instanceof TextWebSocketFrame text) {
            onText(text.text());
        } else if (frame instanceof PingWebSocketFrame) {
            ctx.writeAndFlush(new PongWebSocketFrame(frame.content().retain()));
        } else if (frame instanceof CloseWebSocketFrame close) {
            ctx.writeAndFlush(close.retainedDuplicate()).addListener(ChannelFutureListener.CLOSE);
        } else if (frame instanceof BinaryWebSocketFrame) {
            if (session == null) {
                startSession(adapters.probe(path, ""));
            }
            sendError(GatewayError.of(ErrorCode.INVALID_JSON, "binary frames are not supported; send JSON text frames"));
        }
        // Pong frames need no answer.
    }

    private void onText(String text) {
        if (session == null) {
            startSession(adapters.probe(path, text));
        }
        Decoded decoded = session.decode(text);
        if (decoded instanceof Decoded.Failure f) {
            log.debug("{} sent a bad {} frame: {}", connectionId, adapter.id(), f.error().message());
            metrics.refused(ServerMetrics.INVALID_INPUT);
            sendError(f.error());
            return;
        }
        for (Command c : ((Decoded.Commands) decoded).commands()) {
            if (c instanceof Command.Ping) {
                try {
                    session.pong(writer);
                } catch (IOException | RuntimeException e) {
                    encoderFailed(e);
                }
                flushFrames();
            } else {
                hub.submit(c, this);
            }
        }
    }

    private void sendError(GatewayError error) {
        writeError(error);
        flushFrames();
    }

    /** Writes an error frame without flushing; on the event loop. */
    private void writeError(GatewayError error) {
        if (closed || session == null) {
            return;
        }
        try {
            session.encodeError(error, writer);
        } catch (IOException | RuntimeException e) {
            encoderFailed(e);
        }
    }

    private void encoderFailed(Exception e) {
        writer.abort();
        log.error("{} encoder of {} failed", connectionId, adapter.id(), e);
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
        WireAdapter a = adapter;
        return a != null && a.answersApprovals();
    }

    /** The connection's event loop, which writes its events. */
    @Override
    public Executor executor() {
        ChannelHandlerContext c = ctx;
        return c == null ? null : c.channel().eventLoop();
    }

    @Override
    public String traceparent() {
        return traceparent;
    }

    @Override
    public String dialect() {
        WireAdapter a = adapter;
        return a == null ? "other" : a.id();
    }

    @Override
    public boolean deliver(Envelope envelope) {
        return outbox.offer(envelope);
    }

    @Override
    public void prime(java.util.List<Envelope> shown) {
        outbox.prime(shown);
    }

    /** The session takes in an event its client was shown before it resumed; nothing is sent. */
    private void takeIn(Envelope e) {
        try {
            session.prime(e);
        } catch (IOException | RuntimeException ex) {
            encoderFailed(ex);
        }
    }

    /**
     * Writes one event's frames. The cursor goes on the last of them only: a client's cursor then
     * always means "every frame of every event up to here", and a client that lost its connection
     * between two frames of one event gets that event again whole rather than missing its end.
     */
    private void encode(Envelope e) {
        encodingSeq = e.seq();
        try {
            session.encode(e, writer);
            if (lastOfEvent != null) {
                addCursor(lastOfEvent, adapter.cursorStyle(), encodingSeq);
                append(lastOfEvent);
            }
        } catch (IOException | RuntimeException ex) {
            // The held frame is a scratch buffer: dropped, not released.
            encoderFailed(ex);
        } finally {
            lastOfEvent = null;
            encodingSeq = 0;
        }
        if (pending.full()) {
            writePending();
        }
    }

    /** Frames the WebSocket header in front of a finished frame and adds it to the pending buffer. */
    private void append(ByteBuf frame) {
        outbox.wrote(frame.readableBytes());
        // The writer leaves WEBSOCKET_HEADROOM in front of every frame, room for any header.
        pending.add((ByteBuf) WireFraming.webSocketText(frame));
    }

    /** Hands the pending frames to the channel, unflushed. */
    private void writePending() {
        ByteBuf frames = pending.take();
        if (frames != null) {
            ctx.write(frames, ctx.voidPromise());
        }
    }

    /** Hands the pending frames to the channel and flushes it: how every task that wrote frames ends. */
    private void flushFrames() {
        writePending();
        ctx.flush();
    }

    /**
     * Adds the event's seq, the client's resume cursor, to a frame that is one JSON object:
     * the closing brace becomes {@code ,"seq":n}} (or {@code ,"metadata":{"seq":n}}}).
     */
    static void addCursor(ByteBuf frame, Cursors.Style style, long seq) {
        int end = frame.writerIndex() - 1;
        if (end < 1 || frame.getByte(end) != '}') {
            return;
        }
        boolean empty = frame.getByte(end - 1) == '{';
        boolean metadata = style == Cursors.Style.METADATA;
        frame.writerIndex(end);
        if (!empty) {
            frame.writeByte(',');
        }
        frame.writeBytes(metadata ? METADATA_SEQ_FIELD : SEQ_FIELD);
        WireFraming.writeDecimal(frame, seq);
        if (metadata) {
            frame.writeByte('}');
        }
        frame.writeByte('}');
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            outbox.drain();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void overflowed() {
        if (outbox.overflowed()) {
            ctx.executor().execute(this::tooSlow);
        }
    }

    /** The client does not read fast enough: close with 1013; it may reconnect and resume. */
    private void tooSlow() {
        log.info("{} fell more than {} bytes behind; closing it (it may reconnect and resume)", connectionId,
                outbox.maxBytes());
        close(WebSocketCloseStatus.TRY_AGAIN_LATER, "client too slow; reconnect and resume");
    }

    @Override
    public void reject(GatewayError error) {
        // Through the outbox: a refusal of a command reaches the client before any event emitted after it.
        outbox.refuse(error);
    }

    /** Completes when the channel has closed. */
    public io.netty.channel.ChannelFuture closeFuture() {
        return ctx.channel().closeFuture();
    }

    /** Closes from any thread: the close frame is sent on the connection's own thread. */
    public void executeClose(WebSocketCloseStatus status, String reason) {
        ctx.executor().execute(() -> close(status, reason));
    }

    /** Sends a close frame with this status and closes the connection; on the event loop. */
    void close(WebSocketCloseStatus status, String reason) {
        if (closed) {
            return;
        }
        closed = true;
        closeCode = Integer.toString(status.code());
        outbox.close();
        ctx.writeAndFlush(new CloseWebSocketFrame(status.code(), reason)).addListener(ChannelFutureListener.CLOSE);
        // A peer that reads nothing never takes the close frame: close the socket anyway.
        ctx.executor().schedule(() -> {
            ctx.close();
        }, CLOSE_TIMEOUT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        outbox.close();
        if (pending != null) {
            pending.release();
        }
        if (session != null) {
            metrics.closed(adapter.id(), "websocket", closeCode == null ? "client" : closeCode);
        }
        hub.disconnected(this);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException || cause instanceof CorruptedWebSocketFrameException
                || cause instanceof CorruptedFrameException) {
            log.debug("{} broke the WebSocket framing: {}", connectionId, cause.getMessage());
            WebSocketCloseStatus status = cause instanceof CorruptedWebSocketFrameException c
                    ? c.closeStatus() : WebSocketCloseStatus.MESSAGE_TOO_BIG;
            if (cause instanceof TooLongFrameException) {
                status = WebSocketCloseStatus.MESSAGE_TOO_BIG;
            }
            if (ctx.channel().isActive()) {
                close(status, cause instanceof TooLongFrameException ? "message too big" : "bad framing");
            }
            return;
        }
        if (cause instanceof IOException) {
            log.debug("{} I/O error: {}", connectionId, cause.getMessage());
        } else {
            log.warn("{} failed", connectionId, cause);
        }
        ctx.close();
    }
}
