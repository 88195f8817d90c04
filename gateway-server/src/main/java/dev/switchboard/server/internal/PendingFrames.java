package dev.switchboard.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * A connection's frames gathered for its channel: each frame, once framed for its transport, is
 * copied into one pooled buffer, and what a drain wrote leaves as that one buffer rather than a
 * buffer and an outbound entry each (both released one by one after the write, which costs more
 * than the copy). The frames themselves are written into one of the event loop's two
 * {@linkplain #scratch scratch buffers}. Event loop only.
 */
final class PendingFrames {
    /** What the gathering buffer starts at; it grows as frames are added. */
    private static final int INITIAL_BYTES = 4096;
    /** Gathered frames go to the channel once this many are waiting, so its writability follows them. */
    private static final int WRITE_BYTES = 32 * 1024;
    /** A scratch buffer that grew past this is not kept for the next frames. */
    private static final int SCRATCH_KEPT_BYTES = 64 * 1024;
    /**
     * The two buffers each event loop writes its connections' frames into: a frame is copied on
     * once it is known whether it carries its event's cursor, so a thread needs the frame held back
     * and the one after it. Heap buffers made here, not by an allocator: they live as long as the
     * thread and are never released.
     */
    private static final FastThreadLocal<ByteBuf[]> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected ByteBuf[] initialValue() {
            return new ByteBuf[] {newScratch(), newScratch()};
        }
    };

    private final ChannelHandlerContext ctx;
    /** The frames gathered since they last went to the channel; null when none. */
    private ByteBuf gathered;

    PendingFrames(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * An empty scratch buffer of the calling event loop, of at least {@code capacity}, that is not
     * {@code held} (the frame held back, or null): a frame written there is the caller's until its
     * thread's next frame but one, and is never released.
     */
    static ByteBuf scratch(ByteBuf held, int capacity) {
        ByteBuf[] pair = SCRATCH.get();
        int i = pair[0] == held ? 1 : 0;
        if (pair[i].capacity() > SCRATCH_KEPT_BYTES) {
            pair[i] = newScratch();
        }
        return pair[i].clear().ensureWritable(capacity);
    }

    private static ByteBuf newScratch() {
        return new UnpooledHeapByteBuf(UnpooledByteBufAllocator.DEFAULT, 1024, Integer.MAX_VALUE);
    }

    /** Copies a framed frame's readable bytes in; the frame stays the caller's. */
    void add(ByteBuf framed) {
        if (gathered == null) {
            gathered = ctx.alloc().buffer(Math.max(INITIAL_BYTES, framed.readableBytes()));
        }
        gathered.writeBytes(framed);
    }

    /** Whether enough is gathered that it should go to the channel before the drain ends. */
    boolean full() {
        return gathered != null && gathered.readableBytes() >= WRITE_BYTES;
    }

    /** The gathered frames, now the caller's to write; null when there are none. */
    ByteBuf take() {
        ByteBuf frames = gathered;
        gathered = null;
        return frames;
    }

    /** Drops what is gathered: the connection is gone. */
    void release() {
        if (gathered != null) {
            gathered.release();
            gathered = null;
        }
    }
}
