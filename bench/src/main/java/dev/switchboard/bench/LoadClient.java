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
import io.netty.channel.EventLoop;
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
import java.util.concurrent.atomic.AtomicReference;

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
        m.startEpochMillis = System.currentTimeMillis();
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
        Timeline timeline = plan.paced() ? Timeline.merge(m.start, m.startEpochMillis, List.copyOf(m.timelines)) : null;
        return new LoadResult(server, plan, m.frames.get(), m.runs.get(), m.retries.get(), m.errors.get(),
                end - m.start, !finished, latency, !plan.dialect().stampsMillis, null, null, 0, 0, 0, timeline);
    }

    /**
     * The cluster's workload, set up: {@code count} AG-UI conversations over WebSocket, each with two
     * connections: a <em>starter</em> on {@code runPort} that sends the conversation's run inputs (so the
     * runs execute on that server), and a measured <em>reader</em> on {@code readPort} joined to the
     * conversation. Each starter creates its conversation with a run of one chunk; its reader joins after
     * that run's last event ({@code /agui/ws?threadId=<id>&last_seq=<n>}: a join takes effect a moment
     * after the upgrade, and a run that ended before that would not be shown live, where after a cursor
     * it is replayed); a second run of one chunk must then reach the reader. The connections stay open
     * for every {@link Pairs#run} until {@link Pairs#close}. Both connections of a conversation share
     * one event loop of the client.
     */
    public Pairs openPairs(int runPort, int readPort, int count) throws InterruptedException {
        Measurement setUp = new Measurement(new LoadPlan(Dialect.AGUI_WS, count, 1, 1, java.time.Duration.ZERO,
                java.time.Duration.ofMinutes(2)));
        Pairs pairs = new Pairs(count);
        try {
            long t0 = System.nanoTime();
            Semaphore opening = new Semaphore(CONNECTING);
            CountDownLatch startersOpen = new CountDownLatch(count);
            for (int i = 0; i < count; i++) {
                opening.acquire();
                Pair p = new Pair(group.next(), opening);
                pairs.all.add(p);
                p.connect(p.starter, runPort, Dialect.AGUI_WS.path, startersOpen, setUp);
            }
            await(startersOpen, "the starters did not connect", setUp);
            CountDownLatch created = new CountDownLatch(count);
            pairs.all.forEach(p -> p.setUp(Pair.Stage.CREATE, created, setUp));
            await(created, "the starters did not create their conversations", setUp);
            long t1 = System.nanoTime();
            CountDownLatch readersOpen = new CountDownLatch(count);
            for (Pair p : pairs.all) {
                opening.acquire();
                p.connect(p.reader, readPort, Dialect.AGUI_WS.path + "?threadId=" + p.conversation + "&last_seq="
                        + p.createdSeq, readersOpen, setUp);
            }
            await(readersOpen, "the readers did not connect", setUp);
            CountDownLatch joined = new CountDownLatch(count);
            pairs.all.forEach(p -> p.setUp(Pair.Stage.JOIN, joined, setUp));
            await(joined, "a run did not reach the readers that joined its conversation", setUp);
            long t2 = System.nanoTime();
            pairs.setUpTimes = String.format("starters connected and conversations created in %.1f s, readers joined "
                    + "and reached in %.1f s", (t1 - t0) / 1e9, (t2 - t1) / 1e9);
            return pairs;
        } catch (InterruptedException | RuntimeException e) {
            pairs.close();
            throw e;
        }
    }

    /** Waits for a set-up step of {@link #openPairs}, at most 120 s, and fails at the first error. */
    private static void await(CountDownLatch latch, String what, Measurement m) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!latch.await(100, TimeUnit.MILLISECONDS)) {
            if (m.errors.get() > 0 || System.nanoTime() > deadline) {
                break;
            }
        }
        if (m.errors.get() > 0 || latch.getCount() > 0) {
            String first = m.firstError.get();
            throw new IllegalStateException(what + " (" + latch.getCount() + " left, " + m.errors.get() + " errors"
                    + (first == null ? "" : "; the first: " + first) + ")");
        }
    }

    /** The conversations of {@link #openPairs}, each a starter and a reader, open until closed. */
    public final class Pairs implements AutoCloseable {
        private final List<Pair> all;
        private volatile String firstError;
        private String setUpTimes = "";

        private Pairs(int count) {
            this.all = new ArrayList<>(count);
        }

        public int size() {
            return all.size();
        }

        /** How long the set-up's steps took, for the log. */
        public String setUpTimes() {
            return setUpTimes;
        }

        /** What the first error of the last {@link #run} was, or null. */
        public String firstError() {
            return firstError;
        }

        /**
         * In the first {@code plan.clients()} conversations, the starter sends {@code benchmark <n>}, and the
         * next run starts when the reader has this one's {@code RUN_FINISHED}: at once (back to back), or
         * on the plan's schedule (a run every {@code interval} from a random phase, later if the last run
         * has not ended by then). Frames, latency (from the emission time every AG-UI frame carries) and the
         * time are the readers'; the starters' frames are read and not counted. Run inputs refused as busy
         * are retried; any other error is counted (and retried).
         */
        public LoadResult run(String server, LoadPlan plan) throws InterruptedException {
            if (plan.dialect() != Dialect.AGUI_WS || plan.clients() > all.size()) {
                throw new IllegalArgumentException("paired runs are AG-UI over WebSocket, at most one a pair");
            }
            Measurement m = new Measurement(plan);
            m.start = System.nanoTime();
            long interval = plan.interval().toNanos();
            for (Pair p : all.subList(0, plan.clients())) {
                p.begin(m, interval == 0 ? 0 : ThreadLocalRandom.current().nextLong(interval));
            }
            boolean finished = m.done.await(plan.limit().toMillis(), TimeUnit.MILLISECONDS);
            m.stopped = true;
            long end = finished ? m.lastEnd.get() : System.nanoTime();
            if (!finished) {
                // Runs still streaming would spill into the next measurement: wait (a while) for their ends.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (all.stream().anyMatch(p -> p.sentAt != 0) && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
            }
            firstError = m.firstError.get();
            Histogram latency = new Histogram(3_600_000_000L, 3);
            for (Histogram h : m.histograms) {
                latency.add(h);
            }
            return new LoadResult(server, plan, m.frames.get(), m.runs.get(), m.retries.get(), m.errors.get(),
                    end - m.start, !finished, latency, false, null, null, 0, 0, 0, null);
        }

        @Override
        public void close() {
            for (Pair p : all) {
                p.close();
            }
        }
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
        /** Only for a paced plan: each reading thread's {@link Timeline}. */
        final Queue<Timeline> timelines = new ConcurrentLinkedQueue<>();
        final ThreadLocal<Timeline> timeline = ThreadLocal.withInitial(() -> {
            Timeline t = new Timeline(this.start, this.startEpochMillis);
            timelines.add(t);
            return t;
        });
        /** The first error's description, for a set-up that fails. */
        final AtomicReference<String> firstError = new AtomicReference<>();
        volatile long start;
        /** The wall-clock time of {@link #start}, for a paced plan's {@link Timeline}. */
        volatile long startEpochMillis;
        volatile boolean stopped;

        void error(String what) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, what.length() > 500 ? what.substring(0, 500) + "…" : what);
        }

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
            if (m.plan.paced()) {
                m.timeline.get().add(System.nanoTime(), latency);
            }
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

    /**
     * One conversation of {@link #openPairs}: its starter and its reader, both on {@code loop}, where
     * everything but {@link #connect} runs.
     */
    private final class Pair {
        enum Stage { CREATE, JOIN, MEASURE }

        private static final byte[] RUN_FINISHED = Dialect.AGUI_WS.lastFrameMarker();
        private static final byte[] RUN_ERROR = "\"type\":\"RUN_ERROR\"".getBytes(CharsetUtil.US_ASCII);
        private static final byte[] ERROR = Dialect.AGUI_WS.errorMarker();
        private static final byte[] BUSY = "\"errorCode\":\"run_in_progress\"".getBytes(CharsetUtil.US_ASCII);
        private static final byte[] SEQ = "\"seq\":".getBytes(CharsetUtil.US_ASCII);

        final EventLoop loop;
        final String conversation = UUID.randomUUID().toString();
        final Connection starter = new Connection(true);
        final Connection reader = new Connection(false);
        private final Semaphore opening;
        /** The set-up or measurement under way; set on the loop. */
        private Measurement m;
        private Stage stage = Stage.CREATE;
        private CountDownLatch setUpDone;
        /** The run a set-up stage waits for, as its frames name it. */
        private byte[] setUpRun;
        private int runsDone;
        private boolean finished;
        /** A paced measurement's offset of this conversation's schedule. */
        private long phase;
        /** When the current run's input was sent, or 0 between runs. */
        private volatile long sentAt;
        /** The seq of the creating run's last event. */
        volatile long createdSeq;

        Pair(EventLoop loop, Semaphore opening) {
            this.loop = loop;
            this.opening = opening;
        }

        void connect(Connection c, int port, String uri, CountDownLatch connected, Measurement setUp) {
            c.connected = connected;
            c.setUp = setUp;
            new Bootstrap().group(loop).channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            c.channel = ch;
                            WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                                    .webSocketUri(URI.create("ws://" + HOST + ":" + port + uri))
                                    .version(WebSocketVersion.V13)
                                    .allowExtensions(false)
                                    .maxFramePayloadLength(MAX_FRAME)
                                    .handshakeTimeoutMillis(60_000)
                                    .build();
                            ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536),
                                    new WebSocketClientProtocolHandler(config), new WebSocketFrameAggregator(MAX_FRAME), c);
                        }
                    })
                    .connect(HOST, port).addListener(f -> {
                        if (!f.isSuccess()) {
                            setUp.error("could not connect to port " + port + ": " + f.cause());
                            c.opened();
                        }
                    });
        }

        /** Sends a set-up run of one chunk and counts {@code done} down when it has arrived where the stage says. */
        void setUp(Stage stage, CountDownLatch done, Measurement setUp) {
            loop.execute(() -> {
                this.m = setUp;
                this.stage = stage;
                this.setUpDone = done;
                sendRun();
            });
        }

        void begin(Measurement measurement, long phaseNanos) {
            loop.execute(() -> {
                m = measurement;
                stage = Stage.MEASURE;
                setUpDone = null;
                runsDone = 0;
                finished = false;
                phase = phaseNanos;
                next(phaseNanos);
            });
        }

        /** Starts the next measured run now or when its turn comes. */
        private void next(long delayNanos) {
            if (delayNanos <= 0) {
                sendRun();
            } else {
                loop.schedule(this::sendRun, delayNanos, TimeUnit.NANOSECONDS);
            }
        }

        private void sendRun() {
            if (finished || m.stopped) {
                return;
            }
            if (!starter.active() || stage != Stage.CREATE && !reader.active()) {
                m.error("a connection of conversation " + conversation + " closed");
                finish();
                return;
            }
            String runId = Ids.next("run");
            String text = stage == Stage.MEASURE ? m.plan.message() : "benchmark 1";
            setUpRun = stage == Stage.MEASURE ? null : ("\"runId\":\"" + runId + "\"").getBytes(CharsetUtil.US_ASCII);
            sentAt = System.nanoTime();
            starter.channel.writeAndFlush(new TextWebSocketFrame(
                    Dialect.AGUI_WS.request(conversation, runId, Ids.next("msg"), text)));
        }

        void starterFrame(ByteBuf buf, int from, int to) {
            if (sentAt == 0 || m == null) {
                return;
            }
            if (Bytes.contains(buf, from, to, ERROR)) {
                // Busy: the conversation's last run had not quite ended where it runs. Anything else is an
                // error, counted; either way the run is asked for again shortly.
                if (Bytes.contains(buf, from, to, BUSY)) {
                    m.retries.incrementAndGet();
                } else {
                    m.error("conversation " + conversation + ", starter: " + buf.toString(from, to - from,
                            CharsetUtil.UTF_8));
                }
                sentAt = 0;
                loop.schedule(this::sendRun, RETRY_MILLIS, TimeUnit.MILLISECONDS);
            } else if (stage == Stage.CREATE && setUpRun != null && Bytes.contains(buf, from, to, RUN_FINISHED)
                    && Bytes.contains(buf, from, to, setUpRun)) {
                int at = Bytes.indexOf(buf, from, to, SEQ);
                createdSeq = Math.max(0, at < 0 ? 0 : Bytes.readLong(buf, at + SEQ.length, to));
                sentAt = 0;
                setUpDone.countDown();
            }
        }

        void readerFrame(ByteBuf buf, int from, int to) {
            if (m == null) {
                return;
            }
            if (Bytes.contains(buf, from, to, ERROR) || Bytes.contains(buf, from, to, RUN_ERROR)) {
                m.error("conversation " + conversation + ", reader: " + buf.toString(from, to - from, CharsetUtil.UTF_8));
            }
            if (sentAt == 0) {
                return;
            }
            if (stage == Stage.JOIN) {
                if (setUpRun != null && Bytes.contains(buf, from, to, RUN_FINISHED) && Bytes.contains(buf, from, to, setUpRun)) {
                    sentAt = 0;
                    setUpDone.countDown();
                }
                return;
            }
            if (stage != Stage.MEASURE) {
                return;
            }
            int at = Bytes.indexOf(buf, from, to, TIMESTAMP);
            long ts = at < 0 ? -1 : Bytes.readLong(buf, at + TIMESTAMP.length, to);
            if (ts < 0) {
                m.error("conversation " + conversation + ", reader: a frame without a timestamp");
                return;
            }
            Instant now = Instant.now();
            long latency = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000 - ts * 1000;
            m.frames.incrementAndGet();
            m.latency.get().recordValue(Math.max(0, Math.min(latency, 3_600_000_000L)));
            if (Bytes.contains(buf, from, to, RUN_FINISHED)) {
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
        }

        void finish() {
            if (!finished) {
                finished = true;
                if (stage == Stage.MEASURE) {
                    m.done.countDown();
                }
            }
        }

        void close() {
            for (Connection c : new Connection[] {starter, reader}) {
                if (c.channel != null) {
                    c.closing = true;
                    c.channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
                }
            }
        }

        /** One of the two connections. */
        final class Connection extends ChannelInboundHandlerAdapter {
            final boolean starts;
            Channel channel;
            CountDownLatch connected;
            Measurement setUp;
            volatile boolean closing;
            private boolean open;

            Connection(boolean starts) {
                this.starts = starts;
            }

            boolean active() {
                return channel != null && channel.isActive();
            }

            void opened() {
                if (!open) {
                    open = true;
                    opening.release();
                    connected.countDown();
                }
            }

            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                    opened();
                } else if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
                    setUp.error("a WebSocket handshake timed out");
                    opened();
                }
                ctx.fireUserEventTriggered(evt);
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (!(msg instanceof TextWebSocketFrame frame)) {
                    ReferenceCountUtil.release(msg);
                    return;
                }
                try {
                    ByteBuf buf = frame.content();
                    if (starts) {
                        starterFrame(buf, buf.readerIndex(), buf.writerIndex());
                    } else {
                        readerFrame(buf, buf.readerIndex(), buf.writerIndex());
                    }
                } finally {
                    frame.release();
                }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                if (!closing) {
                    (m != null ? m : setUp).error("conversation " + conversation + ": the "
                            + (starts ? "starter" : "reader") + "'s connection closed");
                    finish();
                }
                opened();
                ctx.fireChannelInactive();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                (m != null ? m : setUp).error("conversation " + conversation + ": " + cause);
                ctx.close();
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
