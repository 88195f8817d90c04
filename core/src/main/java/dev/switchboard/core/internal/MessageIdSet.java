package dev.switchboard.core.internal;

import java.security.SecureRandom;

/**
 * A set of message ids held as 128-bit fingerprints in one open-addressed {@code long[]}: what a
 * conversation keeps of its history's ids (see ConversationState.messageIds). An id costs 16 to
 * 32 bytes of one array instead of a {@code String}, its bytes and a hash node (some 120 bytes in
 * three objects that live as long as the conversation, which every young collection copied again
 * while they aged).
 *
 * <p>A fingerprint is two SipHash-2-4 values of the id's UTF-16 code units under two keys drawn
 * at start-up, so two ids share one only by chance: about 2<sup>-128</sup> a pair, which no input
 * can raise, as nobody outside knows the keys. Not thread-safe: guarded by the conversation's lock.
 */
final class MessageIdSet {
    private static final long[] KEYS = new long[4];

    static {
        SecureRandom random = new SecureRandom();
        for (int i = 0; i < KEYS.length; i++) {
            KEYS[i] = random.nextLong();
        }
    }

    /** Pairs of fingerprint halves; a pair of zeros is an empty slot. */
    private long[] slots = new long[2 * 8];
    private int size;

    /** Adds {@code id}; true when it was not in the set. */
    boolean add(String id) {
        long a = fingerprintA(id);
        long b = fingerprintB(id);
        if (find(slots, a, b) >= 0) {
            return false;
        }
        if (2 * (size + 1) > slots.length / 2) {
            grow();
        }
        insert(slots, a, b);
        size++;
        return true;
    }

    boolean contains(String id) {
        return find(slots, fingerprintA(id), fingerprintB(id)) >= 0;
    }

    int size() {
        return size;
    }

    /** What takes a fingerprint's two halves. */
    interface FingerprintConsumer {
        void accept(long a, long b);
    }

    /** Hands every id's fingerprint to {@code to}, in no order. */
    void forEach(FingerprintConsumer to) {
        for (int i = 0; i < slots.length; i += 2) {
            if (slots[i] != 0 || slots[i + 1] != 0) {
                to.accept(slots[i], slots[i + 1]);
            }
        }
    }

    private void grow() {
        long[] bigger = new long[slots.length * 2];
        forEach((a, b) -> insert(bigger, a, b));
        slots = bigger;
    }

    /** The slot pair holding the fingerprint, or -1. */
    private static int find(long[] table, long a, long b) {
        int mask = table.length / 2 - 1;
        for (int i = (int) a & mask; ; i = (i + 1) & mask) {
            long sa = table[2 * i];
            long sb = table[2 * i + 1];
            if (sa == a && sb == b) {
                return i;
            }
            if (sa == 0 && sb == 0) {
                return -1;
            }
        }
    }

    private static void insert(long[] table, long a, long b) {
        int mask = table.length / 2 - 1;
        int i = (int) a & mask;
        while (table[2 * i] != 0 || table[2 * i + 1] != 0) {
            i = (i + 1) & mask;
        }
        table[2 * i] = a;
        table[2 * i + 1] = b;
    }

    static long fingerprintA(String id) {
        return nonZero(sipHash24(KEYS[0], KEYS[1], id));
    }

    static long fingerprintB(String id) {
        return sipHash24(KEYS[2], KEYS[3], id);
    }

    /** The first half is never zero, so a pair of zeros always means an empty slot. */
    private static long nonZero(long h) {
        return h == 0 ? 1 : h;
    }

    /**
     * SipHash-2-4 of {@code s}'s UTF-16 code units, little-endian (the bytes of its UTF-16LE
     * encoding), under the key {@code k0, k1}.
     */
    static long sipHash24(long k0, long k1, CharSequence s) {
        long[] v = {k0 ^ 0x736f6d6570736575L, k1 ^ 0x646f72616e646f6dL, k0 ^ 0x6c7967656e657261L,
                k1 ^ 0x7465646279746573L};
        int n = s.length();
        int whole = n & ~3;
        for (int i = 0; i < whole; i += 4) {
            compress(v, s.charAt(i) | (long) s.charAt(i + 1) << 16 | (long) s.charAt(i + 2) << 32
                    | (long) s.charAt(i + 3) << 48);
        }
        // The last word: the units left, and the length in bytes (mod 256) in its top byte.
        long last = (long) (2 * n) << 56;
        for (int i = whole; i < n; i++) {
            last |= (long) s.charAt(i) << (16 * (i - whole));
        }
        compress(v, last);
        v[2] ^= 0xff;
        rounds(v, 4);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
    }

    private static void compress(long[] v, long m) {
        v[3] ^= m;
        rounds(v, 2);
        v[0] ^= m;
    }

    private static void rounds(long[] v, int count) {
        long v0 = v[0];
        long v1 = v[1];
        long v2 = v[2];
        long v3 = v[3];
        for (int r = 0; r < count; r++) {
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13) ^ v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16) ^ v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21) ^ v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17) ^ v2;
            v2 = Long.rotateLeft(v2, 32);
        }
        v[0] = v0;
        v[1] = v1;
        v[2] = v2;
        v[3] = v3;
    }
}
