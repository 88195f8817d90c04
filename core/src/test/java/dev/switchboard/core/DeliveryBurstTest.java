package dev.switchboard.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import static org.assertj.core.api.Assertions.assertThat;

class DeliveryBurstTest {
    private final List<String> ran = new ArrayList<>();
    private final Executor direct = Runnable::run;

    @Test
    void outsideABurstNothingIsHeld() {
        assertThat(DeliveryBurst.hold(direct, () -> ran.add("a"))).isFalse();
        assertThat(ran).isEmpty();
    }

    @Test
    void wakeUpsHeldInABurstRunInOrderWhenItCloses() {
        try (DeliveryBurst burst = DeliveryBurst.open()) {
            assertThat(DeliveryBurst.hold(direct, () -> ran.add("a"))).isTrue();
            assertThat(DeliveryBurst.hold(direct, () -> ran.add("b"))).isTrue();
            assertThat(ran).isEmpty();
        }
        assertThat(ran).containsExactly("a", "b");
        assertThat(DeliveryBurst.hold(direct, () -> ran.add("c"))).as("closed").isFalse();
    }

    @Test
    void aBurstOpenedInsideAnotherEndsWithTheOuterOne() {
        try (DeliveryBurst outer = DeliveryBurst.open()) {
            try (DeliveryBurst inner = DeliveryBurst.open()) {
                DeliveryBurst.hold(direct, () -> ran.add("a"));
            }
            assertThat(ran).as("the inner close").isEmpty();
            DeliveryBurst.hold(direct, () -> ran.add("b"));
        }
        assertThat(ran).containsExactly("a", "b");
    }

    @Test
    void aBurstIsItsThreadsAlone() throws Exception {
        try (DeliveryBurst burst = DeliveryBurst.open()) {
            Thread other = new Thread(() -> {
                if (!DeliveryBurst.hold(direct, () -> ran.add("other"))) {
                    ran.add("not held");
                }
            });
            other.start();
            other.join();
            assertThat(ran).containsExactly("not held");
        }
    }

    @Test
    void anExecutorThatRefusesDoesNotKeepTheOthersBack() {
        Executor shutDown = task -> {
            throw new RejectedExecutionException("shut down");
        };
        try (DeliveryBurst burst = DeliveryBurst.open()) {
            DeliveryBurst.hold(shutDown, () -> ran.add("lost"));
            DeliveryBurst.hold(direct, () -> ran.add("b"));
        }
        assertThat(ran).containsExactly("b");
    }
}
