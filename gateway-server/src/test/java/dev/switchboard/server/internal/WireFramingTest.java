package dev.switchboard.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameEncoder;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The framing put in front of a frame is byte for byte what Netty's own encoders write. */
class WireFramingTest {
    @Test
    void aWebSocketTextFrameIsWhatNettysEncoderWritesAtEveryLengthForm() {
        for (int length : new int[]{0, 1, 125, 126, 127, 65_535, 65_536, 70_000}) {
            byte[] payload = payload(length);
            ByteBuf framed = Unpooled.buffer();
            framed.setIndex(WireFraming.WEBSOCKET_HEADROOM, WireFraming.WEBSOCKET_HEADROOM).writeBytes(payload);
            Object written = WireFraming.webSocketText(framed);
            assertThat(written).as("length %d: framed in place", length).isSameAs(framed);
            assertThat(ByteBufUtil.getBytes(framed)).as("length %d", length).isEqualTo(nettyFrame(payload));
            framed.release();
        }
    }

    @Test
    void aPayloadWithoutRoomGoesToNettysEncoderAsAFrame() {
        ByteBuf payload = Unpooled.copiedBuffer("{}", StandardCharsets.US_ASCII);
        Object written = WireFraming.webSocketText(payload);
        assertThat(written).isInstanceOf(TextWebSocketFrame.class);
        ((TextWebSocketFrame) written).release();
    }

    @Test
    void anSseEventIsTheChunkNettysEncoderWritesWithItsIdFirst() {
        for (int length : new int[]{0, 1, 15, 16, 4_000, 70_000}) {
            for (long seq : new long[]{0, 1, 9, 10, 123_456_789, Long.MAX_VALUE}) {
                byte[] event = payload(length);
                ByteBuf roomy = Unpooled.buffer();
                roomy.setIndex(WireFraming.SSE_CHUNK_HEADROOM, WireFraming.SSE_CHUNK_HEADROOM).writeBytes(event);
                ByteBuf tight = Unpooled.buffer(length).writeBytes(event);
                String id = seq > 0 ? "id: " + seq + "\n" : "";
                byte[] expected = nettyChunk((id + new String(event, StandardCharsets.UTF_8))
                        .getBytes(StandardCharsets.UTF_8));
                for (ByteBuf in : new ByteBuf[]{roomy, tight}) {
                    ByteBuf chunk = WireFraming.sseChunk(in, seq);
                    assertThat(ByteBufUtil.getBytes(chunk)).as("length %d, seq %d", length, seq).isEqualTo(expected);
                    chunk.release();
                    assertThat(in.refCnt()).as("the event's buffer is released with the chunk").isZero();
                }
            }
        }
    }

    private static byte[] payload(int length) {
        byte[] payload = new byte[length];
        for (int i = 0; i < length; i++) {
            payload[i] = (byte) ('a' + i % 26);
        }
        return payload;
    }

    private static byte[] nettyFrame(byte[] payload) {
        EmbeddedChannel channel = new EmbeddedChannel(new WebSocket08FrameEncoder(false));
        channel.writeOutbound(new TextWebSocketFrame(Unpooled.wrappedBuffer(payload)));
        return drain(channel);
    }

    private static byte[] nettyChunk(byte[] content) {
        EmbeddedChannel channel = new EmbeddedChannel(new HttpResponseEncoder());
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        HttpUtil.setTransferEncodingChunked(head, true);
        channel.writeOutbound(head);
        drain(channel);
        channel.writeOutbound(new DefaultHttpContent(Unpooled.wrappedBuffer(content)));
        return drain(channel);
    }

    private static byte[] drain(EmbeddedChannel channel) {
        ByteBuf all = Unpooled.buffer();
        for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
            all.writeBytes(b);
            b.release();
        }
        byte[] bytes = ByteBufUtil.getBytes(all);
        all.release();
        return bytes;
    }
}
