package dev.switchboard.runtime.openai;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

import javax.net.ssl.SSLException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The runtime's connections to its model server, read on Netty event loops. A run's request goes
 * out on the event loop of the connection that asked for the run ({@link
 * dev.switchboard.core.spi.RunContext#home}), so each token the model sends is read, emitted and
 * written to the client by one thread in one wake-up; a run with no such loop uses the runtime's
 * own. Connections are kept alive per event loop and origin, and touched only on their loop.
 * https URLs are spoken over TLS with the JDK's trust store, the host name checked against the
 * certificate.
 */
final class LoopUpstream implements AutoCloseable {
    /** Idle connections kept per event loop and origin; one more is closed. */
    static final int MAX_IDLE = 64;
    /** How long an idle connection is kept. */
    static final Duration KEEP_ALIVE = Duration.ofSeconds(60);
    /** How often a loop that keeps idle connections looks for those kept past {@link #KEEP_ALIVE}. */
    static final Duration SWEEP = Duration.ofSeconds(10);

    private final EventLoopGroup own;
    private final Executor lookups;
    private final Duration connectTimeout;
    private final SslContext tls;
    private final int maxIdle;
    private final long keepAliveNanos;
    private final Duration sweepEvery;
    /** Idle connections by event loop, then origin; the inner maps are touched only on their loop. */
    private final Map<EventLoop, Idle> idle = new ConcurrentHashMap<>();

    /**
     * Threads are named {@code switchboard-<name>-loop}; {@code lookups} resolves host names (it may
     * block); {@code tls} makes a TLS context for https URLs.
     */
    LoopUpstream(String name, Executor lookups, Duration connectTimeout, boolean tls) {
        this(name, lookups, connectTimeout, tls, MAX_IDLE, KEEP_ALIVE, SWEEP);
    }

    /** As above, keeping at most {@code maxIdle} idle connections a loop and origin for {@code keepAlive}, swept every {@code sweepEvery}. */
    LoopUpstream(String name, Executor lookups, Duration connectTimeout, boolean tls, int maxIdle, Duration keepAlive,
                 Duration sweepEvery) {
        this.maxIdle = maxIdle;
        this.keepAliveNanos = keepAlive.toNanos();
        this.sweepEvery = sweepEvery;
        AtomicInteger n = new AtomicInteger();
        this.own = new MultiThreadIoEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "switchboard-" + name + "-loop" + (n.getAndIncrement() == 0 ? "" : "-" + n.get()));
            t.setDaemon(true);
            return t;
        }, NioIoHandler.newFactory());
        this.lookups = lookups;
        this.connectTimeout = connectTimeout;
        try {
            this.tls = tls ? SslContextBuilder.forClient().endpointIdentificationAlgorithm("HTTPS").build() : null;
        } catch (SSLException e) {
            own.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw new IllegalStateException("TLS is not available for the model server: " + e.getMessage(), e);
        }
    }

    /** The loop a run's requests go out on: its connection's {@code home} when it is a NIO event loop, else our own. */
    EventLoop loopFor(Executor home) {
        if (home instanceof IoEventLoop loop && loop.isIoType(NioIoHandler.class) && !loop.isShuttingDown()) {
            return loop;
        }
        return own.next();
    }

    /** Where host name lookups run. */
    Executor lookups() {
        return lookups;
    }

    /** On {@code loop}: an idle connection to {@code origin} that is still open, taken out of the pool; null when none is. */
    Channel take(EventLoop loop, String origin) {
        Idle pool = idle.get(loop);
        ArrayDeque<Channel> q = pool == null ? null : pool.byOrigin.get(origin);
        Channel c;
        while (q != null && (c = q.pollLast()) != null) {
            if (c.isActive()) {
                return c;
            }
        }
        return null;
    }

    /** On {@code loop}: keeps a connection whose answer is over for the next request, or closes it when the pool is full. */
    void park(EventLoop loop, String origin, Channel c) {
        Idle pool = idle.computeIfAbsent(loop, Idle::new);
        ArrayDeque<Channel> q = pool.byOrigin.computeIfAbsent(origin, o -> new ArrayDeque<>());
        if (q.size() >= maxIdle || own.isShuttingDown()) {
            c.close();
            return;
        }
        c.pipeline().get(LoopStream.Reader.class).parkedAt = System.nanoTime();
        q.addLast(c);
        pool.sweepLater();
    }

    /** On {@code loop}: forgets an idle connection that closed. */
    void forget(EventLoop loop, String origin, Channel c) {
        Idle pool = idle.get(loop);
        ArrayDeque<Channel> q = pool == null ? null : pool.byOrigin.get(origin);
        if (q != null) {
            q.remove(c);
        }
    }

    /**
     * The idle connections of one loop, by origin, each queue oldest first; touched only on the
     * loop. While any is kept, a sweep every {@code sweepEvery} closes those idle past the keep-alive.
     */
    private final class Idle {
        final EventLoop loop;
        final Map<String, ArrayDeque<Channel>> byOrigin = new HashMap<>();
        private boolean sweeping;

        Idle(EventLoop loop) {
            this.loop = loop;
        }

        void sweepLater() {
            if (!sweeping) {
                sweeping = true;
                loop.schedule(this::sweep, sweepEvery.toNanos(), TimeUnit.NANOSECONDS);
            }
        }

        private void sweep() {
            sweeping = false;
            long now = System.nanoTime();
            boolean left = false;
            for (ArrayDeque<Channel> q : byOrigin.values()) {
                Channel c;
                while ((c = q.peekFirst()) != null
                        && now - c.pipeline().get(LoopStream.Reader.class).parkedAt >= keepAliveNanos) {
                    q.pollFirst().close();
                }
                left |= !q.isEmpty();
            }
            if (left) {
                sweepLater();
            }
        }

        void closeAll() {
            byOrigin.values().forEach(q -> {
                Channel c;
                while ((c = q.poll()) != null) {
                    c.close();
                }
            });
        }
    }

    /** On {@code loop}: opens a connection to {@code address} ({@code host} is the URL's, for TLS) read by {@code reader}. */
    ChannelFuture connect(EventLoop loop, InetSocketAddress address, String host, boolean secure, LoopStream.Reader reader) {
        if (secure && tls == null) {
            throw new IllegalStateException("no TLS context for an https model server");
        }
        return new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (secure) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc(), host, address.getPort()));
                        }
                        ch.pipeline().addLast(new HttpClientCodec(), reader);
                    }
                })
                .connect(address);
    }

    /** Closes the idle connections and stops the runtime's own loop. */
    @Override
    public void close() {
        for (Idle pool : idle.values()) {
            try {
                pool.loop.execute(pool::closeAll);
            } catch (RejectedExecutionException stopped) {
                // The loop has stopped, and closed its connections with it.
            }
        }
        own.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }
}
