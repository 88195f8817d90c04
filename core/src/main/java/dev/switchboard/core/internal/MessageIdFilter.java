package dev.switchboard.core.internal;

import java.util.Arrays;

/**
 * Every history message id of a conversation whose history outgrew a {@link MessageIdSet}, as a
 * Bloom filter over the same fingerprints: an id it does not hold is surely not in the history,
 * one it holds may not be (a few in a thousand at most). A run's start then asks the store only
 * about the ids the client sent that may be known: a client that sends its new message alone (the
 * load generator, HAI) makes no store query at all, and one that sends the whole history again
 * (AG-UI) still finds the resent ids there.
 *
 * <p>It grows in layers: each takes twice the ids of the one before, at 16 bits an id (some 0.06%
 * false positives once full), and ids go to the newest; an id is held when any layer holds it. It
 * starts at 2 KiB for 1,024 ids, where the set it replaces held 32 KiB. Past {@link #MAX_IDS} it
 * refuses more ({@link #add} answers false) and the conversation drops it for the store's index,
 * so it never holds more than 62 KiB. Not thread-safe: guarded by the conversation's lock.
 */
final class MessageIdFilter {
    /** The most ids a filter takes. */
    static final int MAX_IDS = 1 << 14;
    /** Bits a layer gives an id it was sized for, at least (rounded up to a power of two in all: 16). */
    private static final int BITS_PER_ID = 12;
    /** Bits an id sets in its layer. */
    private static final int PROBES = 8;

    private long[][] layers = new long[0][];
    /** The bits of each layer, a power of two; and how many ids it takes before the next begins. */
    private int[] shifts = new int[0];
    private int[] capacities = new int[0];
    /** Ids added to the newest layer, and in all. */
    private int inNewest;
    private int size;

    /** A filter of the ids in {@code exact}, with room for about as many again before it adds a layer. */
    static MessageIdFilter of(MessageIdSet exact) {
        MessageIdFilter filter = new MessageIdFilter();
        filter.addLayer(Math.max(64, Integer.highestOneBit(exact.size()) * 2));
        exact.forEach(filter::add);
        return filter;
    }

    /** Adds the id of fingerprint {@code a, b}; false, adding nothing, once it holds {@link #MAX_IDS}. */
    boolean add(long a, long b) {
        if (size >= MAX_IDS) {
            return false;
        }
        int newest = layers.length - 1;
        if (inNewest >= capacities[newest]) {
            addLayer(capacities[newest] * 2);
            newest++;
        }
        long[] bits = layers[newest];
        int shift = shifts[newest];
        for (int i = 0; i < PROBES; i++) {
            int bit = (int) ((a + i * b) >>> shift);
            bits[bit >>> 6] |= 1L << bit;
        }
        inNewest++;
        size++;
        return true;
    }

    /** Adds {@code id}; false, adding nothing, once it holds {@link #MAX_IDS}. */
    boolean add(String id) {
        return add(MessageIdSet.fingerprintA(id), MessageIdSet.fingerprintB(id));
    }

    /** False when {@code id} is surely not one of the ids added; true when it may be. */
    boolean mightContain(String id) {
        long a = MessageIdSet.fingerprintA(id);
        long b = MessageIdSet.fingerprintB(id);
        for (int layer = 0; layer < layers.length; layer++) {
            if (holds(layers[layer], shifts[layer], a, b)) {
                return true;
            }
        }
        return false;
    }

    int size() {
        return size;
    }

    private static boolean holds(long[] bits, int shift, long a, long b) {
        for (int i = 0; i < PROBES; i++) {
            int bit = (int) ((a + i * b) >>> shift);
            if ((bits[bit >>> 6] & 1L << bit) == 0) {
                return false;
            }
        }
        return true;
    }

    private void addLayer(int capacity) {
        // At least 12 bits an id, rounded up to a power of two so that a position is a hash's top bits.
        int bits = Integer.highestOneBit(capacity * BITS_PER_ID - 1) << 1;
        int n = layers.length;
        layers = Arrays.copyOf(layers, n + 1);
        shifts = Arrays.copyOf(shifts, n + 1);
        capacities = Arrays.copyOf(capacities, n + 1);
        layers[n] = new long[bits / 64];
        shifts[n] = 64 - Integer.numberOfTrailingZeros(bits);
        capacities[n] = capacity;
        inNewest = 0;
    }
}
