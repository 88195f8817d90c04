package dev.switchboard.bench;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.DialectSession;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

/**
 * The frames of one {@code benchmark <n>} run as the gateway's own session writes them for a
 * WebSocket dialect, encoded once: the frames before the first chunk, one chunk frame (all are
 * alike), and the frames after the last. Ids have the lengths the gateway's have. Where a frame
 * carries a millisecond {@code timestamp}, {@link #stampOffset} says where its 13 digits are, so
 * the floor can write the time of sending into a copy.
 */
public final class FloorFrames {
    /** The timestamp the frames are encoded with: 13 digits, found and replaced when sent. */
    static final long PLACEHOLDER = 1_000_000_000_000L;
    private static final byte[] PLACEHOLDER_FIELD =
            ("\"timestamp\":" + PLACEHOLDER).getBytes(StandardCharsets.US_ASCII);

    public final List<byte[]> head;
    public final byte[] chunk;
    public final List<byte[]> tail;

    private FloorFrames(List<byte[]> head, byte[] chunk, List<byte[]> tail) {
        this.head = head;
        this.chunk = chunk;
        this.tail = tail;
    }

    /** The frames of {@code dialect} (a WebSocket dialect whose last frames do not depend on n). */
    public static FloorFrames of(Dialect dialect, String chunkText) {
        if (dialect != Dialect.AGUI_WS && dialect != Dialect.HAI_WS) {
            throw new IllegalArgumentException("the floor serves agui-ws and hai-ws, not " + dialect.id);
        }
        String conversation = UUID.randomUUID().toString();
        String run = Ids.next("run");
        String message = Ids.next("msg");
        DialectSession session = dialect.newSession(dialect.adapter(), conversation);
        try (BufferFrameWriter head = BufferFrameWriter.keeping(dialect);
             BufferFrameWriter chunk = BufferFrameWriter.keeping(dialect);
             BufferFrameWriter tail = BufferFrameWriter.keeping(dialect)) {
            long seq = 0;
            session.encode(new Envelope(conversation, run, ++seq, PLACEHOLDER, new Event.RunStarted(null)), head);
            session.encode(new Envelope(conversation, run, ++seq, PLACEHOLDER,
                    new Event.MessageStarted(message, Role.ASSISTANT)), head);
            session.encode(new Envelope(conversation, run, ++seq, PLACEHOLDER,
                    new Event.TextDelta(message, chunkText)), chunk);
            session.encode(new Envelope(conversation, run, ++seq, PLACEHOLDER,
                    new Event.MessageCompleted(message, chunkText, List.of())), tail);
            session.encode(new Envelope(conversation, run, ++seq, PLACEHOLDER, new Event.RunFinished()), tail);
            if (chunk.kept().size() != 1) {
                throw new IllegalStateException(dialect.id + " writes " + chunk.kept().size() + " frames per chunk");
            }
            return new FloorFrames(List.copyOf(head.kept()), chunk.kept().get(0), List.copyOf(tail.kept()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Frames one run of {@code n} chunks sends. */
    public int frames(int n) {
        return head.size() + n + tail.size();
    }

    /** Where the 13 digits of the frame's timestamp start, or -1 when it has none. */
    public static int stampOffset(byte[] frame) {
        int at = Bytes.indexOf(frame, 0, frame.length, PLACEHOLDER_FIELD);
        return at < 0 ? -1 : at + PLACEHOLDER_FIELD.length - 13;
    }
}
