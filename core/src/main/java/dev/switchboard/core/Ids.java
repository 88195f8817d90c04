package dev.switchboard.core;

import java.util.concurrent.ThreadLocalRandom;

/** Random identifiers such as {@code msg_3f9a…}: a prefix and 128 random bits in hex. */
public final class Ids {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Ids() {
    }

    /** A new id with this prefix. */
    public static String next(String prefix) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        char[] out = new char[prefix.length() + 1 + 32];
        prefix.getChars(0, prefix.length(), out, 0);
        int p = prefix.length();
        out[p++] = '_';
        for (long word : new long[] {r.nextLong(), r.nextLong()}) {
            for (int shift = 60; shift >= 0; shift -= 4) {
                out[p++] = HEX[(int) (word >>> shift) & 0xf];
            }
        }
        return new String(out);
    }
}
