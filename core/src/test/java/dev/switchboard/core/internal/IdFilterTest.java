package dev.switchboard.core.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class IdFilterTest {

    /** A filter made from a full set of {@code first} ids, as a conversation makes it. */
    private static IdFilter fromSet(List<String> first) {
        MessageIdSet set = new MessageIdSet();
        first.forEach(set::add);
        return IdFilter.of(set);
    }

    private static List<String> ids(String prefix, int count) {
        List<String> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            ids.add(i % 2 == 0 ? prefix + i : prefix + UUID.randomUUID());
        }
        return ids;
    }

    @Test
    void holdsEveryIdOfItsSetAndEveryIdAddedThroughItsLayers() {
        List<String> first = ids("u", 513);
        IdFilter filter = fromSet(first);
        assertThat(filter.size()).isEqualTo(513);
        List<String> later = ids("m", IdFilter.MAX_IDS - 513);
        for (String id : later) {
            assertThat(filter.add(id)).as(id).isTrue();
        }
        assertThat(filter.size()).isEqualTo(IdFilter.MAX_IDS);
        for (String id : first) {
            assertThat(filter.mightContain(id)).as(id).isTrue();
        }
        for (String id : later) {
            assertThat(filter.mightContain(id)).as(id).isTrue();
        }
    }

    @Test
    void tellsAlmostEveryOtherIdIsNew() {
        IdFilter filter = fromSet(ids("u", 513));
        ids("m", IdFilter.MAX_IDS - 513).forEach(filter::add);
        int maybe = 0;
        int asked = 100_000;
        for (int i = 0; i < asked; i++) {
            if (filter.mightContain("other_" + i)) {
                maybe++;
            }
        }
        // Four full layers at some 0.06% each and a fifth barely begun: about 0.25%; 1% leaves room for chance.
        assertThat(maybe).isLessThan(asked / 100);
    }

    @Test
    void refusesIdsPastItsBound() {
        IdFilter filter = fromSet(ids("u", 513));
        ids("m", IdFilter.MAX_IDS - 513).forEach(filter::add);
        assertThat(filter.add("one-too-many")).isFalse();
        assertThat(filter.size()).isEqualTo(IdFilter.MAX_IDS);
    }
}
