package dev.switchboard.server.internal;

import dev.switchboard.core.DeliveryBurst;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import io.netty.channel.ChannelHandlerContext;
import org.jctools.queues.varhandle.unpadded.MpscChunkedVarHandleUnpaddedArrayQueue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Queue;
import java.util.function.Consumer;

/**
 * One connection's bounded queue of events from the hub. {@link #offer} is called on the
 * thread that emits the event and never blocks; the queue is drained on the connection's event loop
 * while the channel is writable (Netty's write-buffer watermarks bound what is written but not
 * yet sent). A client that stops reading leaves events here; past the byte bound (estimated
 * from each event's size) or the event bound, {@link #offer} answers false, the hub drops the
 * connection and it closes; the client may resume from its cursor. So a slow reader costs the
 * gateway a bounded amount of memory and slows no one else.
 */
final class Outbox {
    /** What an event costs beyond its text: keys, ids and framing of a typical frame. */
    private static final int EVENT_OVERHEAD_BYTES = 160;

    /**
     * Slots a chunk of {@link #queue} holds: a full chunk links a new one and the reader drops those
     * it has passed, so a busy queue allocates an array of this many slots where a linked queue
     * allocates a node an event. The queue lives as long as its connection, with one chunk at least:
     * small chunks keep that small (a chunk of 16 is 80 bytes, of 64 some 270), for about a byte an
     * event more of chunks made.
     */
    private static final int QUEUE_CHUNK = 16;
    /** The most items the queue itself takes (the largest it can be); the outbox's bounds are far below it. */
    private static final int MAX_QUEUED = 1 << 30;
    private static final VarHandle QUEUE;
    private static final VarHandle SIZE;
    private static final VarHandle BYTES;
    private static final VarHandle SCHEDULED;
    private static final VarHandle OVERFLOW_REPORTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            QUEUE = lookup.findVarHandle(Outbox.class, "queue", Queue.class);
            SIZE = lookup.findVarHandle(Outbox.class, "size", int.class);
            BYTES = lookup.findVarHandle(Outbox.class, "bytes", long.class);
            SCHEDULED = lookup.findVarHandle(Outbox.class, "scheduled", boolean.class);
            OVERFLOW_REPORTED = lookup.findVarHandle(Outbox.class, "overflowReported", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Envelopes to send, {@link Primed} batches and {@link Refusal}s: many producers (the threads
     * that emit), one consumer (the event loop). Made by the first item, so a connection that is
     * sent nothing costs no queue; without the padding of Netty's queues (some 580 bytes a queue
     * that keeps its ends' counters on cache lines of their own), which a connection's queue, whose
     * producer is most often the consumer's own thread, gains little from.
     */
    private volatile Queue<Object> queue;
    /*
     * The counters below are fields, changed through VarHandles, rather than atomic objects of their
     * own: each of those would be an object more that every connection keeps, and that every young
     * collection copies while the connection is young.
     */
    /** Events queued (see {@link #SIZE}). */
    private volatile int size;
    /** Their estimated bytes (see {@link #BYTES}). */
    private volatile long bytes;
    /** Whether a drain is scheduled (see {@link #SCHEDULED}). */
    private volatile boolean scheduled;
    /**
     * The scheduled drain waits for the end of a burst on the emitting thread ({@link DeliveryBurst}):
     * an offer that finds the queue half full schedules it at once.
     */
    private volatile boolean drainHeld;
    private final int maxEvents;
    private final long maxBytes;
    private final Consumer<Envelope> encoder;
    private final Consumer<Envelope> primer;
    private final Consumer<GatewayError> refuser;
    /** Ends a drain that wrote: flushes the channel (after handing it what the encoder holds back). */
    private final Runnable flusher;
    private final Runnable drainTask = this::drain;
    private ChannelHandlerContext ctx;
    /** Where the events and bytes written are counted; set once the dialect is known. */
    private ServerMetrics.Delivery delivery = ServerMetrics.NONE;
    /** Bytes of frames written since the last flush, for {@link #delivery}; event loop only. */
    private long written;
    private volatile boolean open = true;
    /**
     * Set when an offer found a bound passed: every later offer is refused as well, though the
     * queue may have room again by then. An event that reached the client after one it missed
     * would move its cursor past the missed one, and its resume would skip it.
     */
    private volatile boolean full;
    /** Set by the first {@link #overflowed}: the overflow is counted, and the connection ended, once. */
    private volatile boolean overflowReported;
    private boolean paused = true;

    /**
     * {@code encoder} writes one event to the channel (without flushing), on the event loop;
     * {@code primer} brings the session's state up to an event without writing it;
     * {@code maxEvents} and {@code maxBytes} bound the events waiting to be written.
     */
    Outbox(int maxEvents, long maxBytes, Consumer<Envelope> encoder, Consumer<Envelope> primer) {
        this(maxEvents, maxBytes, encoder, primer, null);
    }

    /**
     * With {@code refuser}, errors answered to the connection's commands ({@link #refuse}) are
     * written (without flushing) in order with the events: a refusal comes before every event
     * emitted after it.
     */
    Outbox(int maxEvents, long maxBytes, Consumer<Envelope> encoder, Consumer<Envelope> primer,
           Consumer<GatewayError> refuser) {
        this(maxEvents, maxBytes, encoder, primer, refuser, null);
    }

    /**
     * With {@code flusher} run at the end of a drain that wrote, in place of flushing the channel:
     * for an encoder that gathers a drain's frames before it hands them to the channel.
     */
    Outbox(int maxEvents, long maxBytes, Consumer<Envelope> encoder, Consumer<Envelope> primer,
           Consumer<GatewayError> refuser, Runnable flusher) {
        this.maxEvents = maxEvents;
        this.maxBytes = maxBytes;
        this.encoder = encoder;
        this.primer = primer;
        this.refuser = refuser;
        this.flusher = flusher;
    }

    /** Events the client was shown before it resumed (see Subscriber.prime); outside the bounds. */
    private record Primed(List<Envelope> events) {
    }

    /** An error answered to one of the connection's commands; outside the bounds. */
    private record Refusal(GatewayError error) {
    }

    /** Binds the outbox to its channel; events wait until {@link #resume()}. */
    void bind(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Counts what is written from now on in {@code delivery}; on the event loop. */
    void meter(ServerMetrics.Delivery delivery) {
        this.delivery = delivery;
    }

    /** Counts {@code bytes} of frames the encoder wrote; on the event loop. */
    void wrote(int bytes) {
        written += bytes;
    }

    /**
     * Counts an overflow of this outbox's connection, once: true the first time, when the caller
     * ends the connection (the hub tells a subscriber each time it refuses an event).
     */
    boolean overflowed() {
        if (!OVERFLOW_REPORTED.compareAndSet(this, false, true)) {
            return false;
        }
        if (delivery.overflows() != null) {
            delivery.overflows().increment();
        }
        return true;
    }

    /** Starts (or restarts) draining; on the event loop. */
    void resume() {
        paused = false;
        drain();
    }

    /**
     * Queues an event; false when a bound would be passed, and for every event after that one
     * ({@link #full}). A closed outbox swallows events.
     */
    boolean offer(Envelope e) {
        if (!open) {
            return true;
        }
        if (full) {
            return false;
        }
        long cost = estimate(e);
        // Both counted before either is compared, so that taking both back leaves them as they were.
        int events = addSize(1);
        long queuedBytes = addBytes(cost);
        if (events > maxEvents || queuedBytes > maxBytes) {
            addSize(-1);
            addBytes(-cost);
            full = true;
            return false;
        }
        queue().add(e);
        schedule();
        if (drainHeld && (size > maxEvents / 2 || bytes > maxBytes / 2)) {
            // Held back no longer: a burst may delay what the client reads, never overflow its queue.
            drainHeld = false;
            ctx.executor().execute(drainTask);
        }
        return true;
    }

    /** Queues events for the primer, in order with the events offered after them. */
    void prime(List<Envelope> shown) {
        if (open) {
            queue().add(new Primed(shown));
            schedule();
        }
    }

    /** Queues an error for the refuser, in order with the events offered before and after it. */
    void refuse(GatewayError error) {
        if (open) {
            queue().add(new Refusal(error));
            schedule();
        }
    }

    /** Adds {@code n} to {@link #size} at once; the sum. */
    private int addSize(int n) {
        return (int) SIZE.getAndAdd(this, n) + n;
    }

    /** Adds {@code n} to {@link #bytes} at once; the sum. */
    private long addBytes(long n) {
        return (long) BYTES.getAndAdd(this, n) + n;
    }

    /** The queue, made by the first producer that needs it. */
    private Queue<Object> queue() {
        Queue<Object> q = queue;
        if (q == null) {
            q = new MpscChunkedVarHandleUnpaddedArrayQueue<>(QUEUE_CHUNK, MAX_QUEUED);
            if (!QUEUE.compareAndSet(this, null, q)) {
                q = queue;
            }
        }
        return q;
    }

    /**
     * Wakes the event loop to drain, unless a drain is scheduled already; while the emitting thread
     * is in a burst, at the burst's end.
     */
    private void schedule() {
        if (SCHEDULED.compareAndSet(this, false, true)) {
            drainHeld = true;
            if (!DeliveryBurst.hold(ctx.executor(), drainTask)) {
                drainHeld = false;
                ctx.executor().execute(drainTask);
            }
        }
    }

    /** Writes queued events while the channel is writable; on the event loop. */
    void drain() {
        drainHeld = false;
        scheduled = false;
        if (paused || !open) {
            return;
        }
        boolean wrote = false;
        int events = 0;
        Object item;
        Queue<Object> queue = this.queue;
        while (open && queue != null && ctx.channel().isWritable() && (item = queue.poll()) != null) {
            if (item instanceof Envelope e) {
                addSize(-1);
                addBytes(-estimate(e));
                encoder.accept(e);
                wrote = true;
                events++;
            } else if (item instanceof Refusal r) {
                refuser.accept(r.error);
                wrote = true;
            } else {
                ((Primed) item).events.forEach(primer);
            }
        }
        if (wrote) {
            if (delivery.events() != null) {
                // Counted once a drain, not once an event.
                delivery.events().increment(events);
                delivery.bytes().increment(written);
            }
            written = 0;
            if (flusher != null) {
                flusher.run();
            } else {
                ctx.flush();
            }
        }
    }

    /** Drops everything queued and refuses nothing more (the connection is gone). */
    void close() {
        open = false;
        Queue<Object> queue = this.queue;
        Object item;
        while (queue != null && (item = queue.poll()) != null) {
            if (item instanceof Envelope e) {
                addSize(-1);
                addBytes(-estimate(e));
            }
        }
    }

    long maxBytes() {
        return maxBytes;
    }

    /** An event's approximate encoded size: its text, and a fixed overhead. */
    private static long estimate(Envelope e) {
        Event ev = e.event();
        return EVENT_OVERHEAD_BYTES + switch (ev.kind()) {
            case TEXT_DELTA -> ((Event.TextDelta) ev).delta().length();
            case MESSAGE_COMPLETED -> ((Event.MessageCompleted) ev).text().length();
            case TOOL_CALL_ARGS -> ((Event.ToolCallArgs) ev).delta().length();
            case TOOL_RESULT -> ((Event.ToolResult) ev).content().length();
            default -> 0;
        };
    }
}
