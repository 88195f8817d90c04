package dev.switchboard.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;

/**
 * The transports' framing put in front of a frame in the room its writer left
 * ({@link NettyFrameWriter}'s headroom): no frame object and no copy from Netty's encoders, which
 * pass a plain buffer through as it is. A frame, framed, is copied into its connection's buffer
 * for the drain, which leaves whole ({@link PendingFrames}). Frames of most events are small and
 * many, so this is per-frame work saved on the event loops.
 */
final class WireFraming {
    /** The most a server's WebSocket frame header takes (no mask): 2 bytes and an 8-byte length. */
    static final int WEBSOCKET_HEADROOM = 10;
    /**
     * Room for an SSE event's {@code id: <seq>\n} (at most 25 bytes) and the HTTP chunk's size
     * line (at most 8 hex digits and CRLF).
     */
    static final int SSE_CHUNK_HEADROOM = 25 + 10;

    private static final int FIN_TEXT = 0x81;
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] ID = {'i', 'd', ':', ' '};

    private WireFraming() {
    }

    /**
     * {@code payload} as one final text frame: its header put in front when there is room, else a
     * {@link TextWebSocketFrame} for Netty's encoder to frame.
     */
    static Object webSocketText(ByteBuf payload) {
        int length = payload.readableBytes();
        int header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
        int at = payload.readerIndex() - header;
        if (at < 0) {
            return new TextWebSocketFrame(payload);
        }
        payload.setByte(at, FIN_TEXT);
        if (header == 2) {
            payload.setByte(at + 1, length);
        } else if (header == 4) {
            payload.setByte(at + 1, 126);
            payload.setShort(at + 2, length);
        } else {
            payload.setByte(at + 1, 127);
            payload.setLong(at + 2, length);
        }
        return payload.readerIndex(at);
    }

    /**
     * An SSE event as one chunk of a chunked HTTP body: {@code id: <seq>} first when {@code seq}
     * is above 0, the chunk's size line in front and its CRLF after. The result is written past
     * the HTTP encoder (which would frame it as a chunk again); {@code event} is released if a new
     * buffer had to be made for it.
     */
    static ByteBuf sseChunk(ByteBuf event, long seq) {
        ByteBuf chunk = event;
        if (event.readerIndex() < SSE_CHUNK_HEADROOM) {
            chunk = Unpooled.buffer(SSE_CHUNK_HEADROOM + event.readableBytes() + 2);
            chunk.setIndex(SSE_CHUNK_HEADROOM, SSE_CHUNK_HEADROOM).writeBytes(event);
            event.release();
        }
        if (seq > 0) {
            int digits = digits(seq);
            int at = chunk.readerIndex() - ID.length - digits - 1;
            chunk.setBytes(at, ID);
            setDecimal(chunk, at + ID.length, seq, digits);
            chunk.setByte(at + ID.length + digits, '\n');
            chunk.readerIndex(at);
        }
        int size = chunk.readableBytes();
        if (size == 0) {
            // A chunk of size 0 would end the body; nothing is written instead.
            return chunk;
        }
        int hexDigits = Math.max(1, (Integer.SIZE - Integer.numberOfLeadingZeros(size) + 3) / 4);
        int at = chunk.readerIndex() - hexDigits - 2;
        for (int i = 0; i < hexDigits; i++) {
            chunk.setByte(at + i, HEX[(size >>> ((hexDigits - 1 - i) * 4)) & 0xF]);
        }
        chunk.setByte(at + hexDigits, '\r');
        chunk.setByte(at + hexDigits + 1, '\n');
        chunk.readerIndex(at);
        return chunk.writeByte('\r').writeByte('\n');
    }

    /** Appends a number of at least 0 in ASCII digits, without making a string of it. */
    static void writeDecimal(ByteBuf buf, long n) {
        int digits = digits(n);
        buf.ensureWritable(digits);
        setDecimal(buf, buf.writerIndex(), n, digits);
        buf.writerIndex(buf.writerIndex() + digits);
    }

    /** Sets {@code n}'s {@code digits} ASCII digits from {@code at}. */
    private static void setDecimal(ByteBuf buf, int at, long n, int digits) {
        long rest = n;
        for (int i = at + digits - 1; i >= at; i--) {
            buf.setByte(i, '0' + (int) (rest % 10));
            rest /= 10;
        }
    }

    private static int digits(long n) {
        int digits = 1;
        for (long rest = n / 10; rest > 0; rest /= 10) {
            digits++;
        }
        return digits;
    }
}
