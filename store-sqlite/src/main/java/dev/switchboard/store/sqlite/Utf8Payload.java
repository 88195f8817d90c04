package dev.switchboard.store.sqlite;

import java.util.Arrays;

/**
 * A segment's payload as UTF-8 bytes in one array of its exact size, encoded as
 * {@code String.getBytes(UTF_8)} encodes (a surrogate without its pair becomes {@code ?}).
 * <p>
 * The driver binds a {@code String} by encoding it to a new array, so a payload bound as text was
 * copied twice on the heap (the builder's {@code toString}, then its UTF-8 bytes); bound as these
 * bytes and cast to text in the statement ({@code CAST(? AS TEXT)}), it is copied once. The bytes
 * are written to a scratch array first, three bytes a character at most. The scratch is kept from
 * payload to payload up to {@link #KEPT_BYTES}, enough for a segment of full length; a longer
 * payload (a segment whose first event is large) takes an array of its own, dropped after it. One
 * writer thread uses it.
 */
final class Utf8Payload {
    /** The largest scratch kept between payloads: three bytes for each character a segment grows to. */
    static final int KEPT_BYTES = 3 * SqliteConversationStore.SEGMENT_CHARS;

    private byte[] scratch = new byte[3 * 4096];

    byte[] encode(StringBuilder payload) {
        int n = payload.length();
        byte[] out = scratch;
        if (out.length < 3 * n) {
            out = new byte[Math.max(3 * n, Math.min(2 * out.length, KEPT_BYTES))];
            if (out.length <= KEPT_BYTES) {
                scratch = out;
            }
        }
        int o = 0;
        for (int i = 0; i < n; i++) {
            char c = payload.charAt(i);
            if (c < 0x80) {
                out[o++] = (byte) c;
            } else if (c < 0x800) {
                out[o++] = (byte) (0xC0 | c >> 6);
                out[o++] = (byte) (0x80 | c & 0x3F);
            } else if (!Character.isSurrogate(c)) {
                out[o++] = (byte) (0xE0 | c >> 12);
                out[o++] = (byte) (0x80 | c >> 6 & 0x3F);
                out[o++] = (byte) (0x80 | c & 0x3F);
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(payload.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, payload.charAt(++i));
                out[o++] = (byte) (0xF0 | cp >> 18);
                out[o++] = (byte) (0x80 | cp >> 12 & 0x3F);
                out[o++] = (byte) (0x80 | cp >> 6 & 0x3F);
                out[o++] = (byte) (0x80 | cp & 0x3F);
            } else {
                out[o++] = '?';
            }
        }
        return Arrays.copyOf(out, o);
    }

    /** The bytes of the scratch kept for the next payload. */
    int keptBytes() {
        return scratch.length;
    }
}
