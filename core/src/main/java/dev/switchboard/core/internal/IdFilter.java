package dev.switchboard.core.internal;

import java.util.Arrays;

/**
 * A set of ids as a Bloom filter over {@link MessageIdSet}'s fingerprints: an id it does not hold
 * was surely never added, one it holds may not have been (a few in a thousand at most).
 *
 * <p>A conversation keeps one of its history's message ids once they outgrow a {@link MessageIdSet}
 * ({@link #of}): a run's start then asks the store only about the ids the client sent that may be
 * known, so a client that sends its new message alone (the load generator, HAI) makes no store
 * query at all, and one that sends the whole history again (AG-UI) still finds the resent ids there.
 * A store keeps one of the conversation ids it holds ({@link #growing}), to tell a new conversation
 * without reading its files (see ConversationStore.surelyAbsent).
 *
 * <p>It grows in layers: each takes twice the ids of the one before, at 16 bits an id (some 0.06%
 * false positives once full), and ids go to the newest; an id is held when any layer holds it. A
 * conversation's starts at 2 KiB for 1,024 ids, where the set it replaces held 32 KiB; past
 * {@link #MAX_IDS} it refuses more ({@link #add} answers false) and the conversation drops it for
 * the store's index, so it never holds more than 62 KiB. Not thread-safe: its owner guards it (a
 * conversation's by the conversation's lock).
 */
public final class IdFilter {
    /** The most ids a conversation's filter of message ids takes. */
    static final int MAX_IDS = 1 << 14;
    /** The most ids a {@link #growing} filter takes: its layers then hold some 128 MiB. */
    public static final int GROWING_MAX_IDS = 1 << 26;
    /** Bits a layer gives each id it takes; with a power of two of ids, a layer's bits are one too. */
    private static final int BITS_PER_ID = 16;
    /** Bits an id sets in its layer. */
    private static final int PROBES = 8;

    /** The layers' bits, oldest first; a layer takes {@code bits / BITS_PER_ID} ids. */
    private long[][] layers = new long[0][];
    /** Ids added to the newest layer, and in all. */
    private int inNewest;
    private int size;
    /** The most ids it takes. */
    private final int maxIds;

    private IdFilter(int maxIds) {
        this.maxIds = maxIds;
    }

    /** A filter of the ids in {@code exact}, with room for about as many again before it adds a layer. */
    static IdFilter of(MessageIdSet exact) {
        IdFilter filter = new IdFilter(MAX_IDS);
        filter.addLayer(Math.max(64, Integer.highestOneBit(exact.size()) * 2));
        exact.forEach(filter::add);
        return filter;
    }

    /**
     * An empty filter with room for {@code capacity} ids (rounded up to a power of two, at least 64)
     * before it adds a layer, that takes up to {@link #GROWING_MAX_IDS} ids.
     */
    public static IdFilter growing(int capacity) {
        IdFilter filter = new IdFilter(GROWING_MAX_IDS);
        filter.addLayer(Math.max(64, Integer.highestOneBit(Math.max(1, capacity - 1)) * 2));
        return filter;
    }

    /** Adds the id of fingerprint {@code a, b}; false, adding nothing, once it holds as many as it takes. */
    boolean add(long a, long b) {
        if (size >= maxIds) {
            return false;
        }
        long[] bits = layers[layers.length - 1];
        int capacity = bits.length * 64 / BITS_PER_ID;
        if (inNewest >= capacity) {
            bits = addLayer(capacity * 2);
        }
        int shift = shift(bits);
        for (int i = 0; i < PROBES; i++) {
            int bit = bit(a, b, i, shift);
            bits[bit >>> 6] |= 1L << bit;
        }
        inNewest++;
        size++;
        return true;
    }

    /** Adds {@code id}; false, adding nothing, once it holds as many as it takes. */
    public boolean add(String id) {
        return add(MessageIdSet.fingerprintA(id), MessageIdSet.fingerprintB(id));
    }

    /** False when {@code id} is surely not one of the ids added; true when it may be. */
    public boolean mightContain(String id) {
        long a = MessageIdSet.fingerprintA(id);
        long b = MessageIdSet.fingerprintB(id);
        for (long[] bits : layers) {
            if (holds(bits, a, b)) {
                return true;
            }
        }
        return false;
    }

    public int size() {
        return size;
    }

    private static boolean holds(long[] bits, long a, long b) {
        int shift = shift(bits);
        for (int i = 0; i < PROBES; i++) {
            int bit = bit(a, b, i, shift);
            if ((bits[bit >>> 6] & 1L << bit) == 0) {
                return false;
            }
        }
        return true;
    }

    /** How far a hash is shifted for its top bits to be a position in {@code bits}, a power of two of them. */
    private static int shift(long[] bits) {
        return 64 - Integer.numberOfTrailingZeros(bits.length * 64);
    }

    /** The position of the fingerprint's {@code i}th probe: the top bits of {@code a + i b}. */
    private static int bit(long a, long b, int i, int shift) {
        return (int) ((a + i * b) >>> shift);
    }

    /** Starts a layer for {@code capacity} ids, a power of two, and answers its bits. */
    private long[] addLayer(int capacity) {
        long[] bits = new long[capacity * BITS_PER_ID / 64];
        layers = Arrays.copyOf(layers, layers.length + 1);
        layers[layers.length - 1] = bits;
        inNewest = 0;
        return bits;
    }
}
