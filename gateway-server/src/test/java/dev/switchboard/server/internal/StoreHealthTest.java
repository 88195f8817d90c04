package dev.switchboard.server.internal;

import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.spi.ConversationStore;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** The store's health as {@code /healthz} reports it: a problem counts once two checks in a row found it. */
class StoreHealthTest {
    /** A store whose checks answer {@code answers} in turn (null: it serves), then serve. */
    private static ConversationStore answering(List<String> answers, List<String> reported) {
        ConversationStore real = new InMemoryConversationStore();
        ConcurrentLinkedQueue<String> left = new ConcurrentLinkedQueue<>();
        answers.forEach(a -> left.add(a == null ? "" : a));
        return (ConversationStore) Proxy.newProxyInstance(ConversationStore.class.getClassLoader(),
                new Class<?>[] {ConversationStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("problem")) {
                        String next = left.poll();
                        reported.add(next == null ? "" : next);
                        return next == null || next.isEmpty() ? null : next;
                    }
                    return method.invoke(real, args);
                });
    }

    @Test
    void oneFailedCheckBetweenGoodOnesIsNoOutageAndTwoInARowAre() throws Exception {
        List<String> reported = new CopyOnWriteArrayList<>();
        ConversationStore store = answering(Arrays.asList(null, "slow", null, "down", "down", null), reported);
        // The scheduled checks come an hour apart: the first runs at once, the test makes the others.
        try (StoreHealth health = new StoreHealth(store, null, Duration.ofHours(1))) {
            for (int i = 0; i < 500 && reported.isEmpty(); i++) {
                Thread.sleep(10);
            }
            assertThat(reported).hasSize(1);
            assertThat(health.problem()).isNull();

            health.check();
            assertThat(health.problem()).as("one check that failed").isNull();
            health.check();
            health.check();
            assertThat(health.problem()).as("the first of two failed checks").isNull();
            health.check();
            assertThat(health.problem()).as("the second").isEqualTo("down");
            health.check();
            assertThat(health.problem()).as("serving again, at the first good check").isNull();
        }
    }
}
