package dev.switchboard.bench;

import io.netty.buffer.ByteBuf;

/** Byte searches and number reading on frames, without decoding them to text. */
public final class Bytes {
    private Bytes() {
    }

    /** The first index of {@code needle} in {@code hay[from, to)}, or -1. */
    public static int indexOf(byte[] hay, int from, int to, byte[] needle) {
        outer:
        for (int i = from; i <= to - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The first index of {@code needle} in the buffer's readable bytes {@code [from, to)}, or -1. */
    public static int indexOf(ByteBuf hay, int from, int to, byte[] needle) {
        outer:
        for (int i = from; i <= to - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay.getByte(i + j) != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Whether the bytes {@code [from, to)} of the buffer contain {@code needle}. */
    public static boolean contains(ByteBuf hay, int from, int to, byte[] needle) {
        return needle != null && indexOf(hay, from, to, needle) >= 0;
    }

    /** The non-negative decimal number starting at {@code at}, or -1 if no digit is there. */
    public static long readLong(ByteBuf buf, int at, int to) {
        long value = 0;
        int i = at;
        while (i < to) {
            byte b = buf.getByte(i);
            if (b < '0' || b > '9') {
                break;
            }
            value = value * 10 + (b - '0');
            i++;
        }
        return i == at ? -1 : value;
    }

    /** Writes {@code value} as exactly {@code digits} ASCII digits at {@code at}. */
    public static void writeDigits(ByteBuf buf, int at, long value, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            buf.setByte(at + i, (byte) ('0' + value % 10));
            value /= 10;
        }
    }
}
