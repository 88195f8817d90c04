package dev.switchboard.server.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.switchboard.core.Json;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NettyFrameWriterTest {
    private static final byte[] NONE = new byte[0];
    private static final byte[] SSE_PREFIX = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SSE_SUFFIX = "\n\n".getBytes(StandardCharsets.US_ASCII);

    /** Unpooled, so that its count of bytes in use says whether every frame was released. */
    private final UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false);
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelHandlerAdapter() {
    });
    private final ChannelHandlerContext ctx = channel.pipeline().firstContext();

    NettyFrameWriterTest() {
        channel.config().setAllocator(alloc);
    }

    @AfterEach
    void everyBufferIsReleased() {
        channel.finishAndReleaseAll();
        assertThat(alloc.metric().usedHeapMemory()).isZero();
    }

    private NettyFrameWriter webSocketWriter() {
        return new NettyFrameWriter(ctx, NONE, NONE, ctx::write);
    }

    private static void message(JsonGenerator g, int n) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "delta");
        g.writeNumberField("n", n);
        g.writeStringField("text", "é \"quoted\"\n");
        g.writeEndObject();
    }

    private static void frame(NettyFrameWriter w, int n) throws IOException {
        message(w.begin(), n);
        w.end();
    }

    private static String expected(int n) {
        return "{\"type\":\"delta\",\"n\":" + n + ",\"text\":\"é \\\"quoted\\\"\\n\"}";
    }

    /** The frames queued on the channel, flushed, as text; each buffer released. */
    private List<String> sent() {
        channel.flushOutbound();
        List<String> frames = new ArrayList<>();
        ByteBuf b;
        while ((b = channel.readOutbound()) != null) {
            frames.add(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return frames;
    }

    @Test
    void severalFramesInARowAreEachOneDocumentBetweenPrefixAndSuffix() throws Exception {
        NettyFrameWriter w = new NettyFrameWriter(ctx, SSE_PREFIX, SSE_SUFFIX, ctx::write);
        for (int n = 1; n <= 3; n++) {
            frame(w, n);
        }

        List<String> frames = sent();
        assertThat(frames).containsExactly("data: " + expected(1) + "\n\n", "data: " + expected(2) + "\n\n",
                "data: " + expected(3) + "\n\n");
        String json = frames.get(1).substring("data: ".length(), frames.get(1).length() - 2);
        assertThat(Json.parseStrict(json).get("n").asInt()).isEqualTo(2);
    }

    @Test
    void noSeparatorLeaksBetweenFramesOfAnyKindOfRootValue() throws Exception {
        NettyFrameWriter w = webSocketWriter();
        frame(w, 1);
        w.begin().writeString("two");
        w.end();
        w.begin().writeNumber(3);
        w.end();
        frame(w, 4);

        assertThat(sent()).containsExactly(expected(1), "\"two\"", "3", expected(4));
    }

    @Test
    void framesOfSeveralWritersOnOneThreadStayApart() throws Exception {
        NettyFrameWriter a = webSocketWriter();
        NettyFrameWriter b = new NettyFrameWriter(ctx, SSE_PREFIX, SSE_SUFFIX, ctx::write);
        frame(a, 1);
        frame(b, 2);
        frame(a, 3);

        assertThat(sent()).containsExactly(expected(1), "data: " + expected(2) + "\n\n", expected(3));
    }

    @Test
    void aFrameAfterAnAbortedOneIsWellFormed() throws Exception {
        NettyFrameWriter w = webSocketWriter();
        JsonGenerator g = w.begin();
        g.writeStartObject();
        g.writeStringField("type", "half");
        g.writeFieldName("text");
        g.writeStartArray();
        w.abort();
        frame(w, 2);
        frame(webSocketWriter(), 3);

        assertThat(sent()).containsExactly(expected(2), expected(3));
    }

    @Test
    void aFrameEndedInsideAnUnfinishedValueIsDroppedAndTheNextIsWellFormed() throws Exception {
        NettyFrameWriter w = webSocketWriter();
        JsonGenerator g = w.begin();
        g.writeStartObject();
        g.writeStringField("type", "half");

        assertThatThrownBy(w::end).isInstanceOf(IllegalStateException.class);
        frame(w, 2);
        assertThat(sent()).containsExactly(expected(2));
    }

    @Test
    void aFrameLeftOpenKeepsItsGeneratorWhileTheThreadsOtherWritersGetAnother() throws Exception {
        NettyFrameWriter late = webSocketWriter();
        NettyFrameWriter other = webSocketWriter();
        JsonGenerator g = late.begin();
        g.writeStartObject();
        g.writeStringField("type", "late");
        frame(other, 1);
        g.writeEndObject();
        late.end();
        frame(other, 2);
        frame(late, 3);

        assertThat(sent()).containsExactly(expected(1), "{\"type\":\"late\"}", expected(2), expected(3));
    }

    @Test
    void writersOnTwoThreadsEachWriteWithTheirOwnThreadsGenerator() throws Exception {
        NettyFrameWriter there = webSocketWriter();
        NettyFrameWriter here = webSocketWriter();
        CountDownLatch begun = new CountDownLatch(1);
        CountDownLatch hereDone = new CountDownLatch(1);
        CompletableFuture<Void> thread = CompletableFuture.runAsync(() -> {
            try {
                JsonGenerator g = there.begin();
                g.writeStartObject();
                g.writeStringField("type", "there");
                begun.countDown();
                assertThat(hereDone.await(10, TimeUnit.SECONDS)).isTrue();
                g.writeEndObject();
                there.end();
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(begun.await(10, TimeUnit.SECONDS)).isTrue();
        frame(here, 1);
        hereDone.countDown();
        thread.get(10, TimeUnit.SECONDS);

        assertThat(sent()).containsExactly(expected(1), "{\"type\":\"there\"}");
    }

    @Test
    void nothingIsWrittenWhenNothingWasBegun() {
        NettyFrameWriter w = webSocketWriter();
        w.abort();

        assertThatThrownBy(w::end).isInstanceOf(IllegalStateException.class);
        assertThat(sent()).isEmpty();
        assertThat(alloc.metric().usedHeapMemory()).isZero();
    }

    @Test
    void aSecondBeginBeforeTheEndFailsAndLeavesTheFrameToFinish() throws Exception {
        NettyFrameWriter w = webSocketWriter();
        JsonGenerator g = w.begin();

        assertThatThrownBy(w::begin).isInstanceOf(IllegalStateException.class);
        message(g, 1);
        w.end();
        assertThat(sent()).containsExactly(expected(1));
    }
}
