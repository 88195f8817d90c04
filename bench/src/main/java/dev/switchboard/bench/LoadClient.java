package dev.switchboard.bench;

import dev.switchboard.core.Ids;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.CharsetUtil;
import io.netty.util.ReferenceCountUtil;
import org.HdrHistogram.Histogram;

import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load generator: N concurrent connections of one dialect, each running its
 * {@code benchmark <n>} runs one after another, on a Netty client. Frames are counted and
 * their latency taken by looking at their bytes (no JSON parsing), so the client spends as
 * little of the shared CPU as it can. Loopback only: the host is always 127.0.0.1.
 */
public final class LoadClient implements AutoCloseable {
    private static final String HOST = "127.0.0.1";
    private static final byte[] TIMESTAMP = "\"timestamp\":".getBytes(CharsetUtil.US_ASCII);
    private static final int MAX_FRAME = 64 << 20;
    /** Connections opening at once. */
    private static final int CONNECTING = 256;
    private static final long RETRY_MILLIS = 2;

    private final EventLoopGroup group;

    public LoadClient(int threads) {
        this.group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    }

    /**
     * Connects {@code plan.clients()} clients to the server on {@code port}, then runs the plan.
     * Connecting is not measured; the measurement starts when every client is connected.
     */
    public LoadResult run(String server, int port, LoadPlan plan) throws InterruptedException {
        Measurement m = new Measurement(plan);
        List<Client> clients = new ArrayList<>(plan.clients());
        Semaphore opening = new Semaphore(CONNECTING);
        CountDownLatch connected = new CountDownLatch(plan.clients());
        for (int i = 0; i < plan.clients(); i++) {
            opening.acquire();
            Client c = plan.dialect().webSocket ? new WsClient(m, connected, opening) : new SseClient(m, connected, opening);
            clients.add(c);
            c.connect(port);
        }
        if (!connected.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("clients did not connect within 120 s");
        }
        m.start = System.nanoTime();
        long interval = plan.interval().toNanos();
        for (Client c : clients) {
            long phase = interval == 0 ? 0 : ThreadLocalRandom.current().nextLong(interval);
            c.begin(phase);
        }
        boolean finished = m.done.await(plan.limit().toMillis(), TimeUnit.MILLISECONDS);
        m.stopped = true;
        long end = finished ? m.lastEnd.get() : System.nanoTime();
        for (Client c : clients) {
            c.close();
        }
        Histogram latency = new Histogram(3_600_000_000L, 3);
        for (Histogram h : m.histograms) {
            latency.add(h);
        }
        return new LoadResult(server, plan, m.frames.get(), m.runs.get(), m.retries.get(), m.errors.get(),
                end - m.start, !finished, latency, !plan.dialect().stampsMillis, null, null, 0);
    }

    /**
     * Opens {@code count} WebSocket connections of {@code dialect} that send nothing, and returns
     * them once all are open; for measuring what an idle connection costs the server.
     */
    public List<Channel> openIdle(int port, Dialect dialect, int count) throws InterruptedException {
        Measurement m = new Measurement(new LoadPlan(dialect, 1, 1, 1, java.time.Duration.ZERO,
                java.time.Duration.ofMinutes(1)));
        Semaphore opening = new Semaphore(CONNECTING);
        CountDownLatch connected = new CountDownLatch(count);
        List<Client> clients = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            opening.acquire();
            Client c = new WsClient(m, connected, opening);
            clients.add(c);
            c.connect(port);
        }
        if (!connected.await(180, TimeUnit.SECONDS)) {
            throw new IllegalStateException("idle connections did not open within 180 s");
        }
        if (m.errors.get() > 0) {
            throw new IllegalStateException(m.errors.get() + " of " + count + " idle connections failed to open");
        }
        List<Channel> out = new ArrayList<>(count);
        for (Client c : clients) {
            out.add(c.channel);
        }
        return out;
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Counters shared by the clients of one measurement. */
    private static final class Measurement {
        final LoadPlan plan;
        final AtomicLong frames = new AtomicLong();
        final AtomicLong runs = new AtomicLong();
        final AtomicLong retries = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong lastEnd = new AtomicLong();
        final CountDownLatch done;
        final Queue<Histogram> histograms = new ConcurrentLinkedQueue<>();
        final ThreadLocal<Histogram> latency = ThreadLocal.withInitial(() -> {
            Histogram h = new Histogram(3_600_000_000L, 3);
            histograms.add(h);
            return h;
        });
        volatile long start;
        volatile boolean stopped;

        Measurement(LoadPlan plan) {
            this.plan = plan;
            this.done = new CountDownLatch(plan.clients());
        }
    }

    /** One connection and its runs; everything but {@link #connect} runs on its event loop. */
    private abstract class Client extends ChannelInboundHandlerAdapter {
        final Measurement m;
        final Dialect dialect;
        final String conversation = UUID.randomUUID().toString();
        private final CountDownLatch connected;
        private final Semaphore opening;
        Channel channel;
        private boolean open;
        private boolean finished;
        private long phase;
        private int runsDone;
        /** When the current run's request was sent, or 0 between runs. */
        long sentAt;

        Client(Measurement m, CountDownLatch connected, Semaphore opening) {
            this.m = m;
            this.dialect = m.plan.dialect();
            this.connected = connected;
            this.opening = opening;
        }

        abstract void initChannel(SocketChannel ch, int port);

        abstract void send(String body);

        void connect(int port) {
            new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            Client.this.initChannel(ch, port);
                        }
                    })
                    .connect(HOST, port).addListener(f -> {
                        if (!f.isSuccess()) {
                            m.errors.incrementAndGet();
                            opened(false);
                        }
                    });
        }

        /** The connection is ready for requests (or failed to become so). */
        void opened(boolean ok) {
            if (!open) {
                open = true;
                opening.release();
                connected.countDown();
                if (!ok) {
                    finish();
                }
            }
        }

        void begin(long phaseNanos) {
            if (channel == null || !channel.isActive()) {
                finish();
                return;
            }
            this.phase = phaseNanos;
            channel.eventLoop().execute(() -> next(phaseNanos));
        }

        /** Starts the next run now or when its turn comes. */
        private void next(long delayNanos) {
            if (m.stopped || finished) {
                return;
            }
            if (delayNanos <= 0) {
                startRun();
            } else {
                channel.eventLoop().schedule(this::startRun, delayNanos, TimeUnit.NANOSECONDS);
            }
        }

        private void startRun() {
            if (m.stopped || finished || !channel.isActive()) {
                return;
            }
            sentAt = System.nanoTime();
            send(dialect.request(conversation, Ids.next("run"), Ids.next("msg"), m.plan.message()));
        }

        /** The server refused the run for now (its conversation was still busy): ask again shortly. */
        void retry() {
            m.retries.incrementAndGet();
            sentAt = 0;
            channel.eventLoop().schedule(this::startRun, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }

        /** One frame of the current run arrived: count it and take its latency. */
        void frame(ByteBuf buf, int from, int to) {
            long latency;
            if (dialect.stampsMillis) {
                int at = Bytes.indexOf(buf, from, to, TIMESTAMP);
                long ts = at < 0 ? -1 : Bytes.readLong(buf, at + TIMESTAMP.length, to);
                if (ts < 0) {
                    m.errors.incrementAndGet();
                    return;
                }
                Instant now = Instant.now();
                latency = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000 - ts * 1000;
            } else {
                latency = (System.nanoTime() - sentAt) / 1000;
            }
            m.frames.incrementAndGet();
            m.latency.get().recordValue(Math.max(0, Math.min(latency, 3_600_000_000L)));
        }

        void runEnded() {
            sentAt = 0;
            runsDone++;
            m.runs.incrementAndGet();
            m.lastEnd.accumulateAndGet(System.nanoTime(), Math::max);
            if (runsDone == m.plan.runsPerClient()) {
                finish();
            } else {
                long interval = m.plan.interval().toNanos();
                next(interval == 0 ? 0 : m.start + phase + runsDone * interval - System.nanoTime());
            }
        }

        void finish() {
            if (!finished) {
                finished = true;
                m.done.countDown();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!finished && !m.stopped && open) {
                m.errors.incrementAndGet();
            }
            opened(false);
            finish();
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            m.errors.incrementAndGet();
            ctx.close();
        }

        void close() {
            if (channel != null) {
                channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
        }
    }

    /** A WebSocket client: one text frame per event, a marker frame at the run's end. */
    private final class WsClient extends Client {
        private final byte[] last = dialect.lastFrameMarker();
        private final byte[] error = dialect.errorMarker();

        WsClient(Measurement m, CountDownLatch connected, Semaphore opening) {
            super(m, connected, opening);
        }

        @Override
        void initChannel(SocketChannel ch, int port) {
            channel = ch;
            WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                    .webSocketUri(URI.create("ws://" + HOST + ":" + port + dialect.webSocketUri(conversation)))
                    .version(WebSocketVersion.V13)
                    .allowExtensions(false)
                    .maxFramePayloadLength(MAX_FRAME)
                    .handshakeTimeoutMillis(60_000)
                    .build();
            ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536),
                    new WebSocketClientProtocolHandler(config), new WebSocketFrameAggregator(MAX_FRAME), this);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                opened(true);
            } else if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
                m.errors.incrementAndGet();
                opened(false);
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        void send(String body) {
            channel.writeAndFlush(new TextWebSocketFrame(body));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof TextWebSocketFrame frame)) {
                ReferenceCountUtil.release(msg);
                return;
            }
            try {
                if (sentAt == 0) {
                    return; // before the first run (VoiceAssist's connected) or between runs
                }
                ByteBuf buf = frame.content();
                int from = buf.readerIndex();
                int to = buf.writerIndex();
                if (Bytes.contains(buf, from, to, error)) {
                    retry();
                    return;
                }
                frame(buf, from, to);
                if (Bytes.contains(buf, from, to, last)) {
                    runEnded();
                }
            } finally {
                frame.release();
            }
        }
    }

    /** A client of an HTTP + SSE dialect: one POST per run on a kept-alive connection. */
    private final class SseClient extends Client {
        private static final byte[] DATA = "data:".getBytes(CharsetUtil.US_ASCII);
        private final ByteBuf pending = Unpooled.buffer(4096);
        private boolean refused;
        private int port;

        SseClient(Measurement m, CountDownLatch connected, Semaphore opening) {
            super(m, connected, opening);
        }

        @Override
        void initChannel(SocketChannel ch, int port) {
            channel = ch;
            this.port = port;
            ch.pipeline().addLast(new HttpClientCodec(), this);
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            opened(true);
            ctx.fireChannelActive();
        }

        @Override
        void send(String body) {
            ByteBuf content = Unpooled.copiedBuffer(body, CharsetUtil.UTF_8);
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, dialect.path, content);
            req.headers().set(HttpHeaderNames.HOST, HOST + ":" + port)
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .set(HttpHeaderNames.ACCEPT, "text/event-stream")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
            channel.writeAndFlush(req);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpResponse res) {
                    refused = res.status().code() != 200;
                    pending.clear();
                }
                if (msg instanceof HttpContent chunk) {
                    if (!refused && sentAt != 0) {
                        pending.writeBytes(chunk.content());
                        events();
                    }
                    if (msg instanceof LastHttpContent) {
                        if (refused) {
                            retry();
                        } else if (sentAt != 0) {
                            runEnded();
                        }
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        /** Takes every complete event (up to a blank line) out of what has arrived. */
        private void events() {
            int from = pending.readerIndex();
            int to = pending.writerIndex();
            for (int i = from; i + 1 < to; i++) {
                if (pending.getByte(i) == '\n' && pending.getByte(i + 1) == '\n') {
                    // An event is an optional "id: <seq>" line and its data line.
                    int data = Bytes.indexOf(pending, from, i, DATA);
                    if (data == from || data > from && pending.getByte(data - 1) == '\n') {
                        frame(pending, data, i);
                    }
                    from = i + 2;
                    i++;
                }
            }
            pending.readerIndex(from);
            pending.discardReadBytes();
        }

        @Override
        void close() {
            super.close();
            pending.release();
        }
    }
}
