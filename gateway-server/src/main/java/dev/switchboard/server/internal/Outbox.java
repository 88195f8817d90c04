package dev.switchboard.server.internal;

import dev.switchboard.core.Envelope;
import io.netty.channel.ChannelHandlerContext;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One connection's bounded queue of events from the hub. {@link #offer} is called from the
 * hub's fan-out thread and never blocks; the queue is drained on the connection's event loop
 * while the channel is writable, so a client that stops reading fills the queue (and is then
 * dropped by the hub) instead of the gateway's memory.
 */
final class Outbox {
    private final Queue<Envelope> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final int capacity;
    private final Consumer<Envelope> encoder;
    private final Runnable drainTask = this::drain;
    private ChannelHandlerContext ctx;
    private volatile boolean open = true;
    private boolean paused = true;

    /** {@code encoder} writes one event to the channel (without flushing), on the event loop. */
    Outbox(int capacity, Consumer<Envelope> encoder) {
        this.capacity = capacity;
        this.encoder = encoder;
    }

    /** Binds the outbox to its channel; events wait until {@link #resume()}. */
    void bind(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Starts (or restarts) draining; on the event loop. */
    void resume() {
        paused = false;
        drain();
    }

    /** Queues an event; false when the queue is full. A closed outbox swallows events. */
    boolean offer(Envelope e) {
        if (!open) {
            return true;
        }
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return false;
        }
        queue.add(e);
        if (scheduled.compareAndSet(false, true)) {
            ctx.executor().execute(drainTask);
        }
        return true;
    }

    /** Writes queued events while the channel is writable; on the event loop. */
    void drain() {
        scheduled.set(false);
        if (paused || !open) {
            return;
        }
        boolean wrote = false;
        Envelope e;
        while (open && ctx.channel().isWritable() && (e = queue.poll()) != null) {
            size.decrementAndGet();
            encoder.accept(e);
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
        }
    }

    /** Drops everything queued and refuses nothing more (the connection is gone). */
    void close() {
        open = false;
        while (queue.poll() != null) {
            size.decrementAndGet();
        }
    }

    int capacity() {
        return capacity;
    }
}
