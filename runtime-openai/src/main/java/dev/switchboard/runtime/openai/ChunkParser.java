package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.core.JsonParser;
import dev.switchboard.core.Json;
import dev.switchboard.core.UpstreamHttp;

import java.io.IOException;
import java.io.InputStream;

/**
 * One JSON parser for the chunks of a model's answer, each read from its event's bytes as they
 * were received: making a parser for each chunk was the largest part of what the gateway
 * allocated at a model's pace (bench/NOTES.md), more than the text it carried. The parser reads
 * the chunks as one stream of root values, each after a space; a chunk is taken only when the
 * parser ended its value within it and nothing but whitespace follows. Anything else (another
 * root, text after the value, bytes that are not JSON or not UTF-8) leaves the parser where no
 * later chunk can use it, so the caller drops it and reads that chunk another way; the next gets
 * a parser of its own. So does a chunk that would carry the parser past the longest document
 * {@link Json#READ_CONSTRAINTS} allow, which bounds each parser's input, not the answer's.
 */
final class ChunkParser {
    private static final long MAX_BYTES = Json.READ_CONSTRAINTS.getMaxDocumentLength();

    private final Feed feed = new Feed();
    private JsonParser parser;
    /** The bytes the parser was given, counted as its byte offsets count them. */
    private long given;
    /** Where the chunk being read starts, as the parser counts. */
    private long chunkStart;

    /** The parser, about to read the root value of this chunk (during the call that got the chunk). */
    JsonParser start(UpstreamHttp.SseView chunk) throws IOException {
        if (parser == null || given + 1 + chunk.length() > MAX_BYTES) {
            drop();
            parser = Json.MAPPER.createParser(feed);
            given = 0;
        }
        feed.next(chunk);
        chunkStart = given + 1;
        given += 1 + chunk.length();
        return parser;
    }

    /** Whether nothing but JSON whitespace follows, in the chunk, the value the parser just ended. */
    boolean restIsBlank(UpstreamHttp.SseView chunk) {
        long read = parser.currentLocation().getByteOffset() - chunkStart;
        for (long i = Math.max(0, read); i < chunk.length(); i++) {
            byte b = chunk.byteAt((int) i);
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    /** Closes the parser (its buffers go back to Jackson's pool); the next chunk gets a new one. */
    void drop() {
        JsonParser p = parser;
        parser = null;
        if (p != null) {
            try {
                p.close();
            } catch (IOException cannot) {
                // The feed has nothing to close.
            }
        }
    }

    /** The current chunk's bytes after a space, then the end of input until the next chunk. */
    private static final class Feed extends InputStream {
        private UpstreamHttp.SseView chunk;
        /** The next byte of the chunk to give; -1 while the separating space is still to come. */
        private int at;

        void next(UpstreamHttp.SseView next) {
            chunk = next;
            at = -1;
        }

        @Override
        public int read() {
            if (chunk == null || at >= chunk.length()) {
                return -1;
            }
            return at++ < 0 ? ' ' : chunk.byteAt(at - 1) & 0xff;
        }

        @Override
        public int read(byte[] into, int offset, int length) {
            if (chunk == null || at >= chunk.length()) {
                return -1;
            }
            if (length == 0) {
                return 0;
            }
            int n = 0;
            if (at < 0) {
                into[offset] = ' ';
                at = 0;
                n = 1;
            }
            int copied = Math.min(length - n, chunk.length() - at);
            chunk.copy(at, into, offset + n, copied);
            at += copied;
            return n + copied;
        }
    }
}
