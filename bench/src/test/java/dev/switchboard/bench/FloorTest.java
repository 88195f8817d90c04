package dev.switchboard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class FloorTest {

    private static String type(byte[] frame) throws Exception {
        return Json.MAPPER.readTree(frame).path("type").asText();
    }

    @Test
    void aguiFramesAreTheGatewaysRunFramingAroundOneChunkFrame() throws Exception {
        FloorFrames f = FloorFrames.of(Dialect.AGUI_WS, "token ");

        assertThat(f.head.stream().map(b -> uncheckedType(b)).toList())
                .containsExactly("RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START");
        assertThat(type(f.chunk)).isEqualTo("TEXT_MESSAGE_CONTENT");
        assertThat(Json.MAPPER.readTree(f.chunk).path("delta").asText()).isEqualTo("token ");
        assertThat(f.tail.stream().map(b -> uncheckedType(b)).toList())
                .containsExactly("TEXT_MESSAGE_END", "STATE_SNAPSHOT", "RUN_FINISHED");
        assertThat(f.frames(100)).isEqualTo(EndToEnd.framesPerRun(Dialect.AGUI_WS, 100));
    }

    @Test
    void theSendingTimeReplacesThePlaceholderTimestamp() throws Exception {
        byte[] chunk = FloorFrames.of(Dialect.AGUI_WS, "token ").chunk;
        int at = FloorFrames.stampOffset(chunk);
        ByteBuf buf = Unpooled.wrappedBuffer(chunk.clone());

        Bytes.writeDigits(buf, at, 1_767_225_600_123L, 13);

        JsonNode frame = Json.MAPPER.readTree(buf.array());
        assertThat(frame.path("timestamp").asLong()).isEqualTo(1_767_225_600_123L);
    }

    @Test
    void haiFramesCarryNoTimestamp() {
        FloorFrames f = FloorFrames.of(Dialect.HAI_WS, "token ");

        assertThat(FloorFrames.stampOffset(f.chunk)).isEqualTo(-1);
        assertThat(f.frames(10)).isEqualTo(EndToEnd.framesPerRun(Dialect.HAI_WS, 10));
    }

    @Test
    void theLoadClientReceivesEveryFrameOfEveryRunFromTheFloor() throws Exception {
        Channel floor = FloorServer.start(0, FloorFrames.of(Dialect.AGUI_WS, "token "));
        try (LoadClient client = new LoadClient(1)) {
            int port = ((InetSocketAddress) floor.localAddress()).getPort();
            LoadResult r = client.run("floor", port, new LoadPlan(Dialect.AGUI_WS, 3, 2, 5, Duration.ZERO,
                    Duration.ofSeconds(20)));

            assertThat(r.timedOut()).isFalse();
            assertThat(r.errors()).isZero();
            assertThat(r.runs()).isEqualTo(6);
            assertThat(r.frames()).isEqualTo(6L * EndToEnd.framesPerRun(Dialect.AGUI_WS, 5));
            assertThat(r.latencyMicros().getTotalCount()).isEqualTo(r.frames());
            assertThat(r.latencyFromRequest()).isFalse();
        } finally {
            floor.close().sync();
        }
    }

    @Test
    void idleConnectionsStayOpen() throws Exception {
        Channel floor = FloorServer.start(0, FloorFrames.of(Dialect.AGUI_WS, "token "));
        try (LoadClient client = new LoadClient(1)) {
            int port = ((InetSocketAddress) floor.localAddress()).getPort();
            List<Channel> open = client.openIdle(port, Dialect.AGUI_WS, 20);

            assertThat(open).hasSize(20).allMatch(Channel::isActive);
            open.forEach(Channel::close);
        } finally {
            floor.close().sync();
        }
    }

    private static String uncheckedType(byte[] frame) {
        try {
            return type(frame);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
