package dev.switchboard.server.internal;

import dev.switchboard.core.spi.ClusterBus;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
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
    /** The key of a client's places on the bus: {@code conn:} and its key. */
    private static final String PLACE = "conn:";
    private static final Logger log = LoggerFactory.getLogger(ConnectionLimits.class);
    /** Per client, its connections counted here only, as the bus did not answer when they opened. */
    private final ConcurrentHashMap<String, Integer> unclustered = new ConcurrentHashMap<>();

    /** The cluster's bus, whose places count a client's connections on every node; null alone. */
    private volatile ClusterBus bus;

    public ConnectionLimits(int maxTotal, int maxPerClient) {
        this.maxTotal = maxTotal;
        this.maxPerClient = maxPerClient;
    }

    /** Counts each client's connections across the cluster of {@code bus} from now on. */
    public void joinCluster(ClusterBus bus) {
        this.bus = bus;
    }

    /**
     * Takes one of the client's places: here and, in a cluster, across it (a client's connections on
     * every node count). Completes false, and nothing taken, when it has none left; in a cluster it
     * completes on the bus's thread, and a bus that does not answer takes nothing from the client:
     * the place is the node's alone until then.
     */
    CompletableFuture<Boolean> acquire(String client) {
        if (!tryAcquire(client)) {
            return CompletableFuture.completedFuture(false);
        }
        ClusterBus b = bus;
        if (b == null) {
            return CompletableFuture.completedFuture(true);
        }
        return b.takePlace(PLACE + client, maxPerClient).handle((taken, e) -> {
            if (e != null) {
                log.warn("could not count a connection of client {} across the cluster: {}", client, e.toString());
                unclustered.merge(client, 1, Integer::sum);
                return true;
            }
            if (!taken) {
                releaseHere(client);
            }
            return taken;
        });
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

    /** Gives a place back, here and across the cluster. */
    void release(String client) {
        releaseHere(client);
        ClusterBus b = bus;
        boolean[] local = {false};
        unclustered.computeIfPresent(client, (k, n) -> {
            local[0] = true;
            return n > 1 ? n - 1 : null;
        });
        if (b != null && !local[0]) {
            b.givePlace(PLACE + client).exceptionally(e -> {
                log.debug("could not give back a connection of client {} across the cluster", client, e);
                return null;
            });
        }
    }

    private void releaseHere(String client) {
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
