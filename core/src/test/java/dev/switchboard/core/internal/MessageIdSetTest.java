package dev.switchboard.core.internal;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class MessageIdSetTest {
    /** The reference's key (bytes 00..0f) as SipHash reads it. */
    private static final long K0 = 0x0706050403020100L;
    private static final long K1 = 0x0f0e0d0c0b0a0908L;

    /** The reference's message of {@code bytes} bytes 00, 01, 02, ..., as UTF-16LE code units (an even count). */
    private static String referenceMessage(int bytes) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < bytes; i += 2) {
            s.append((char) (i | (i + 1) << 8));
        }
        return s.toString();
    }

    @Test
    void sipHashGivesTheReferenceVectors() {
        // The reference implementation's vectors for the messages of 0, 2, 6, 8, 14, 16 and 62 bytes.
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(0))).isEqualTo(0x726fdb47dd0e0e31L);
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(2))).isEqualTo(0x0d6c8009d9a94f5aL);
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(6))).isEqualTo(0xcbc9466e58fee3ceL);
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(8))).isEqualTo(0x93f5f5799a932462L);
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(14))).isEqualTo(0xf723ca908e7af2eeL);
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(16))).isEqualTo(0x3f2acc7f57c29bdbL);
        assertThat(MessageIdSet.sipHash24(K0, K1, referenceMessage(62))).isEqualTo(0xe51b38608ef25f57L);
    }

    @Test
    void holdsEveryIdAddedAndNoOtherThroughItsGrowth() {
        MessageIdSet set = new MessageIdSet();
        Set<String> added = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            String id = i % 3 == 0 ? "msg_" + i : UUID.randomUUID().toString();
            assertThat(set.add(id)).as("first add of %s", id).isTrue();
            added.add(id);
            assertThat(set.add(id)).as("second add of %s", id).isFalse();
        }
        assertThat(set.size()).isEqualTo(2_000);
        for (String id : added) {
            assertThat(set.contains(id)).as(id).isTrue();
        }
        for (int i = 0; i < 2_000; i++) {
            assertThat(set.contains("other_" + i)).isFalse();
            assertThat(set.contains("msg_" + (3 * i + 1))).isFalse();
        }
        // Ids that differ only in their length or their last unit.
        MessageIdSet close = new MessageIdSet();
        assertThat(close.add("")).isTrue();
        assertThat(close.add("\0")).isTrue();
        assertThat(close.add("\0\0")).isTrue();
        assertThat(close.add("a")).isTrue();
        assertThat(close.add("b")).isTrue();
        assertThat(close.contains("\0\0\0")).isFalse();
        assertThat(close.size()).isEqualTo(5);
    }
}
