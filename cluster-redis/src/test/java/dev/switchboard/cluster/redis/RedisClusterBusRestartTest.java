package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.ClusterBus.Entry;
import dev.switchboard.core.spi.ClusterBus.History;
import dev.switchboard.core.spi.ClusterBus.Lease;
import dev.switchboard.core.spi.ClusterBus.Published;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static dev.switchboard.cluster.redis.RedisTests.bytes;
import static dev.switchboard.cluster.redis.RedisTests.conversation;
import static dev.switchboard.cluster.redis.RedisTests.get;
import static dev.switchboard.cluster.redis.RedisTests.sleep;
import static dev.switchboard.cluster.redis.RedisTests.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The bus across a Redis that goes down, hangs, forgets its scripts, or restarts without what it held. */
class RedisClusterBusRestartTest {
    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    RedisClusterBus bus;

    @BeforeEach
    void connect() {
        bus = RedisTests.connect(server.url(), "node-a");
    }

    @AfterEach
    void close() {
        get(bus.close());
    }

    private Lease acquired(String conversation) {
        return get(bus.acquire(conversation)).orElseThrow();
    }

    private Published publish(Lease lease, long seq, String payload) {
        return get(bus.publish(lease, seq, bytes(payload)));
    }

    @Test
    void aRestartLosesLeasesAndHistoryAndTheWritersLearnIt() throws IOException {
        String conversation = conversation();
        Lease lease = acquired(conversation);
        for (int seq = 1; seq <= 3; seq++) {
            publish(lease, seq, "event " + seq);
        }

        server.restart();
        awaitUp();

        assertThat(get(bus.renew(lease))).isFalse();
        assertThat(publish(lease, 4, "lost")).isEqualTo(Published.LEASE_LOST);
        assertThat(get(bus.release(lease))).isFalse();
        History lost = get(bus.history(conversation, 0, 10));
        assertThat(lost.topSeq()).isZero();
        assertThat(lost.entries()).isEmpty();
        Lease next = acquired(conversation);
        assertThat(next.topSeq()).isZero();
        assertThat(next.clean()).isFalse();
        assertThat(publish(next, 4, "event 4")).isEqualTo(Published.PUBLISHED);
        History after3 = get(bus.history(conversation, 3, 10));
        assertThat(after3.entries()).extracting(Entry::seq, Entry::prevSeq).containsExactly(tuple(4L, 0L));
        assertThat(after3.continues(3)).isFalse();
    }

    @Test
    void scriptsRedisNoLongerKnowsAreSentAgain() throws IOException {
        String conversation = conversation();
        Lease lease = acquired(conversation);
        try (var plain = new RedisTests.Plain(server.url())) {
            plain.redis.scriptFlush();
            assertThat(plain.redis.scriptExists(RedisScript.named("publish").sha)).containsExactly(false);

            assertThat(publish(lease, 1, "x")).isEqualTo(Published.PUBLISHED);
            assertThat(plain.redis.scriptExists(RedisScript.named("publish").sha)).containsExactly(true);
        }

        server.restart();
        awaitUp();
        assertThat(publish(acquired(conversation), 2, "y")).isEqualTo(Published.PUBLISHED);
    }

    @Test
    void aReleaseWaitsForAPublishWhoseScriptHadToBeSentAgain() throws Exception {
        String conversation = conversation();
        Lease lease = acquired(conversation);
        try (var plain = new RedisTests.Plain(server.url())) {
            plain.redis.scriptFlush();
            get(bus.release(acquired(conversation())));
            assertThat(plain.redis.scriptExists(RedisScript.named("lease-release").sha,
                    RedisScript.named("publish").sha)).containsExactly(true, false);
        }

        // Paused, Redis reads whatever was sent in one go: the publish fails with NOSCRIPT and is sent
        // again, whole, after a release sent with it would already have run.
        signal("STOP");
        CompletableFuture<Published> published;
        CompletableFuture<Boolean> released;
        try {
            published = bus.publish(lease, 1, bytes("sent again"));
            released = bus.release(lease);
            sleep(100);
        } finally {
            signal("CONT");
        }

        assertThat(get(published)).isEqualTo(Published.PUBLISHED);
        assertThat(get(released)).isTrue();
        Lease next = acquired(conversation);
        assertThat(next.topSeq()).isEqualTo(1);
        assertThat(next.clean()).isTrue();
    }

    @Test
    void subscriptionsAndTheNodeListenerComeBackAfterARestart() throws IOException {
        String conversation = conversation();
        List<Entry> received = new CopyOnWriteArrayList<>();
        Consumer<Entry> listener = received::add;
        List<String> messages = new CopyOnWriteArrayList<>();
        get(bus.subscribe(conversation, listener));
        get(bus.listen(m -> messages.add(text(m))));

        server.restart();
        awaitUp();
        Lease lease = acquired(conversation);
        long deadline = System.currentTimeMillis() + 10_000;
        for (long seq = 1; (received.isEmpty() || messages.isEmpty()) && System.currentTimeMillis() < deadline;
             seq++) {
            // The pub/sub connection may come back after the command connection: publish until it has.
            publish(lease, seq, "after restart");
            get(bus.send("node-a", bytes("after restart")));
            sleep(20);
        }

        assertThat(received).isNotEmpty();
        assertThat(received.get(0).seq() - 1).isEqualTo(received.get(0).prevSeq());
        assertThat(messages).isNotEmpty().allSatisfy(m -> assertThat(m).isEqualTo("after restart"));
        get(bus.unsubscribe(conversation, listener));
    }

    @Test
    void aProblemIsToldAtOnceWhileRedisIsDownAndNoneOnceItIsBack() throws IOException {
        assertThat(get(bus.problem(Duration.ofSeconds(1)))).isNull();

        server.stop();
        long start = System.nanoTime();
        String down = get(bus.problem(Duration.ofSeconds(2)));
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        try {
            assertThat(down).contains("127.0.0.1:" + server.port()).doesNotContain("\n");
            assertThat(tookMs).isLessThan(2_000);
            Lease lease = new Lease(conversation(), "node-a", "token@node-a", 0, false, 1);
            Throwable publishFailure = get(bus.publish(lease, 1, bytes("x")).handle((published, e) -> e));
            assertThat(publishFailure).isNotNull();
        } finally {
            server.start();
        }

        awaitUp();
    }

    @Test
    void aProblemIsToldWhenRedisDoesNotAnswerWithinTheTimeout() throws Exception {
        signal("STOP");
        try {
            assertThat(get(bus.problem(Duration.ofMillis(300))))
                    .isEqualTo("Redis at 127.0.0.1:" + server.port() + " did not answer PING within 300 ms");
        } finally {
            signal("CONT");
        }
        awaitUp();
    }

    private static void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(server.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    private void awaitUp() {
        long deadline = System.currentTimeMillis() + 10_000;
        String problem = get(bus.problem(Duration.ofMillis(500)));
        while (problem != null && System.currentTimeMillis() < deadline) {
            sleep(20);
            problem = get(bus.problem(Duration.ofMillis(500)));
        }
        assertThat(problem).as("Redis's problem after it came back").isNull();
    }
}
