package dev.switchboard.server.internal;

import dev.switchboard.core.DeliveryBurst;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class OutboxTest {
    private int flushes;
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            ctx.flush();
        }
    }, new ChannelInboundHandlerAdapter());
    private final ChannelHandlerContext ctx = channel.pipeline().lastContext();

    @AfterEach
    void releaseWhatWasWritten() {
        channel.finishAndReleaseAll();
    }

    private static Envelope delta(long seq) {
        return new Envelope("conv_1", "run_1", seq, 0, new Event.TextDelta("msg_1", "chunk " + seq));
    }

    @Test
    void aDrainWritesEveryQueuedEventAndFlushesOnce() {
        Outbox outbox = new Outbox(100, 1 << 20,
                e -> ctx.write(Unpooled.copiedBuffer("event " + e.seq(), StandardCharsets.US_ASCII), ctx.voidPromise()),
                e -> {
                });
        outbox.bind(ctx);
        outbox.resume();
        for (long seq = 1; seq <= 3; seq++) {
            assertThat(outbox.offer(delta(seq))).isTrue();
        }
        assertThat(flushes).isZero();

        channel.runPendingTasks();
        assertThat(flushes).isEqualTo(1);
        List<String> written = new ArrayList<>();
        ByteBuf b;
        while ((b = channel.readOutbound()) != null) {
            written.add(b.toString(StandardCharsets.US_ASCII));
            b.release();
        }
        assertThat(written).containsExactly("event 1", "event 2", "event 3");
    }

    @Test
    void afterRefusingAnEventItRefusesEveryLaterOneThoughItHasRoomAgain() {
        List<Long> written = new ArrayList<>();
        Outbox outbox = new Outbox(2, 1 << 20, e -> written.add(e.seq()), e -> {
        });
        outbox.bind(ctx);
        outbox.resume();
        assertThat(outbox.offer(delta(1))).isTrue();
        assertThat(outbox.offer(delta(2))).isTrue();
        assertThat(outbox.offer(delta(3))).as("past the bound of 2 events").isFalse();
        channel.runPendingTasks();
        assertThat(written).containsExactly(1L, 2L);

        // The queue is empty again, but a client shown 4 would resume after it and never get 3.
        assertThat(outbox.offer(delta(4))).isFalse();
        channel.runPendingTasks();
        assertThat(written).containsExactly(1L, 2L);
        assertThat(outbox.overflowed()).as("the first report ends the connection").isTrue();
        assertThat(outbox.overflowed()).as("later ones do nothing more").isFalse();
    }

    @Test
    void inABurstTheDrainWaitsForTheBurstsEndAndWritesItAll() {
        List<Long> written = new ArrayList<>();
        Outbox outbox = new Outbox(100, 1 << 20, e -> written.add(e.seq()), e -> {
        });
        outbox.bind(ctx);
        outbox.resume();
        try (DeliveryBurst burst = DeliveryBurst.open()) {
            for (long seq = 1; seq <= 10; seq++) {
                assertThat(outbox.offer(delta(seq))).isTrue();
            }
            channel.runPendingTasks();
            assertThat(written).as("nothing scheduled before the burst ends").isEmpty();
        }
        channel.runPendingTasks();
        assertThat(written).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        assertThat(flushes).isEqualTo(1);
    }

    @Test
    void aBurstLongerThanHalfTheBoundIsDrainedWithoutWaitingForItsEnd() {
        List<Long> written = new ArrayList<>();
        Outbox outbox = new Outbox(8, 1 << 20, e -> written.add(e.seq()), e -> {
        });
        outbox.bind(ctx);
        outbox.resume();
        try (DeliveryBurst burst = DeliveryBurst.open()) {
            for (long seq = 1; seq <= 5; seq++) {
                assertThat(outbox.offer(delta(seq))).isTrue();
            }
            channel.runPendingTasks();
            assertThat(written).as("past half of 8 events").containsExactly(1L, 2L, 3L, 4L, 5L);
            for (long seq = 6; seq <= 20; seq++) {
                assertThat(outbox.offer(delta(seq))).as("event %d", seq).isTrue();
                channel.runPendingTasks();
            }
        }
        channel.runPendingTasks();
        assertThat(written).hasSize(20).isSorted();
    }
}
