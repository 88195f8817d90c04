package dev.switchboard.store.sqlite;

/**
 * A segment's payload as UTF-8 bytes in one array of its exact size, encoded as
 * {@code String.getBytes(UTF_8)} encodes (a surrogate without its pair becomes {@code ?}).
 * <p>
 * The driver binds a {@code String} by encoding it to a new array, so a payload bound as text was
 * copied twice on the heap (the builder's {@code toString}, then its UTF-8 bytes); bound as these
 * bytes and cast to text in the statement ({@code CAST(? AS TEXT)}), it is copied once. The
 * characters are read through a scratch array that grows to the longest payload, as the builder
 * that holds them does; one writer thread uses it.
 */
final class Utf8Payload {
    private char[] chars = new char[4096];

    byte[] encode(StringBuilder payload) {
        int n = payload.length();
        if (chars.length < n) {
            chars = new char[Math.max(n, chars.length * 2)];
        }
        char[] cs = chars;
        payload.getChars(0, n, cs, 0);
        int size = n;
        boolean ascii = true;
        for (int i = 0; i < n; i++) {
            char c = cs[i];
            if (c >= 0x80) {
                ascii = false;
                if (c < 0x800) {
                    size += 1;
                } else if (!Character.isSurrogate(c)) {
                    size += 2;
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(cs[i + 1])) {
                    size += 2; // four bytes for the pair's two characters
                    i++;
                }
                // A lone surrogate is one byte, '?'.
            }
        }
        byte[] out = new byte[size];
        if (ascii) {
            for (int i = 0; i < n; i++) {
                out[i] = (byte) cs[i];
            }
            return out;
        }
        int o = 0;
        for (int i = 0; i < n; i++) {
            char c = cs[i];
            if (c < 0x80) {
                out[o++] = (byte) c;
            } else if (c < 0x800) {
                out[o++] = (byte) (0xC0 | c >> 6);
                out[o++] = (byte) (0x80 | c & 0x3F);
            } else if (!Character.isSurrogate(c)) {
                out[o++] = (byte) (0xE0 | c >> 12);
                out[o++] = (byte) (0x80 | c >> 6 & 0x3F);
                out[o++] = (byte) (0x80 | c & 0x3F);
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(cs[i + 1])) {
                int cp = Character.toCodePoint(c, cs[++i]);
                out[o++] = (byte) (0xF0 | cp >> 18);
                out[o++] = (byte) (0x80 | cp >> 12 & 0x3F);
                out[o++] = (byte) (0x80 | cp >> 6 & 0x3F);
                out[o++] = (byte) (0x80 | cp & 0x3F);
            } else {
                out[o++] = '?';
            }
        }
        return out;
    }
}
