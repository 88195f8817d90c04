package dev.switchboard.server.internal;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gateway's connection limits: open TCP connections in all, and open WebSockets and
 * streams per client (principal, or remote address when anonymous).
 */
public final class ConnectionLimits {
    private final int maxTotal;
    private final int maxPerClient;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<String, AtomicInteger> perClient = new ConcurrentHashMap<>();
    private final ChannelHandler counter = new Counter();

    public ConnectionLimits(int maxTotal, int maxPerClient) {
        this.maxTotal = maxTotal;
        this.maxPerClient = maxPerClient;
    }

    /** A shareable handler that counts open TCP connections; first in every pipeline. */
    public ChannelHandler counter() {
        return counter;
    }

    /** True when more TCP connections are open than allowed. */
    boolean overTotal() {
        return total.get() > maxTotal;
    }

    /** Takes one of the client's places; false (and nothing taken) when it has none left. */
    boolean tryAcquire(String client) {
        AtomicInteger n = perClient.computeIfAbsent(client, k -> new AtomicInteger());
        if (n.incrementAndGet() > maxPerClient) {
            release(client);
            return false;
        }
        return true;
    }

    /** Gives a place back. */
    void release(String client) {
        perClient.computeIfPresent(client, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    int maxPerClient() {
        return maxPerClient;
    }

    @ChannelHandler.Sharable
    private final class Counter extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            total.incrementAndGet();
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            total.decrementAndGet();
            ctx.fireChannelInactive();
        }
    }
}
