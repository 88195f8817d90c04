package dev.switchboard.cluster.redis;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static dev.switchboard.cluster.redis.RedisTests.bytes;
import static dev.switchboard.cluster.redis.RedisTests.conversation;
import static dev.switchboard.cluster.redis.RedisTests.get;
import static dev.switchboard.cluster.redis.RedisTests.seqs;
import static org.assertj.core.api.Assertions.assertThat;

/** The broker across a Redis that goes down, or restarts without what it held. */
class RedisBrokerRestartTest {
    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    RedisBroker broker;

    @BeforeEach
    void connect() {
        broker = RedisTests.connect(server.url());
    }

    @AfterEach
    void close() {
        get(broker.close());
    }

    @Test
    void afterARestartTheEpochChangesAndCursorsAndPublishesOfTheOldOneAreSignalled() throws IOException {
        String conversation = conversation();
        String before = get(broker.open(conversation, 0)).epoch();
        for (int i = 1; i <= 3; i++) {
            get(broker.publish(conversation, before, null, bytes("event " + i)));
        }

        server.restart();
        awaitUp();

        assertThat(get(broker.publish(conversation, before, null, bytes("lost"))).status())
                .isEqualTo(RedisPublished.Status.NOT_OPEN);
        assertThat(get(broker.history(conversation, before, 2, 10)).status())
                .isEqualTo(RedisHistory.Status.NOT_OPEN);
        RedisPosition reopened = get(broker.open(conversation, 3));
        assertThat(reopened.epoch()).isNotEqualTo(before);
        assertThat(reopened.topSeq()).isEqualTo(3);
        assertThat(get(broker.publish(conversation, before, null, bytes("stale"))))
                .isEqualTo(new RedisPublished(RedisPublished.Status.EPOCH_CHANGED, 0, reopened.epoch()));
        assertThat(get(broker.history(conversation, before, 2, 10)).status())
                .isEqualTo(RedisHistory.Status.EPOCH_CHANGED);
        assertThat(get(broker.publish(conversation, reopened.epoch(), null, bytes("event 4"))).seq()).isEqualTo(4);
        assertThat(seqs(get(broker.history(conversation, reopened.epoch(), 3, 10)).entries())).containsExactly(4L);
    }

    @Test
    void scriptsRedisNoLongerKnowsAreSentAgain() throws IOException {
        String conversation = conversation();
        get(broker.open(conversation, 0));
        try (var plain = new RedisTests.Plain(server.url())) {
            plain.redis.scriptFlush();
            assertThat(plain.redis.scriptExists(RedisScript.named("publish").sha)).containsExactly(false);

            assertThat(get(broker.publish(conversation, null, null, bytes("x"))).seq()).isEqualTo(1);
            assertThat(plain.redis.scriptExists(RedisScript.named("publish").sha)).containsExactly(true);
        }

        server.restart();
        awaitUp();
        String epoch = get(broker.open(conversation, 1)).epoch();
        assertThat(get(broker.publish(conversation, epoch, null, bytes("y"))).seq()).isEqualTo(2);
    }

    @Test
    void aRestartLosesTheLeasesAndTheirOwnersLearnItWhenTheyRenewOrPublish() throws IOException {
        String conversation = conversation();
        String epoch = get(broker.open(conversation, 0)).epoch();
        RedisLease lease = get(broker.acquireLease(conversation, "node-a", Duration.ofSeconds(30))).orElseThrow();

        server.restart();
        awaitUp();
        get(broker.open(conversation, 0));

        assertThat(get(broker.renewLease(lease, Duration.ofSeconds(30)))).isFalse();
        assertThat(get(broker.publish(conversation, epoch, lease.token(), bytes("x"))).status())
                .isEqualTo(RedisPublished.Status.LEASE_LOST);
    }

    @Test
    void subscriptionsComeBackAfterARestart() throws IOException {
        String conversation = conversation();
        List<RedisLiveMessage> received = new CopyOnWriteArrayList<>();
        Consumer<RedisLiveMessage> listener = received::add;
        get(broker.subscribe(conversation, listener));

        server.restart();
        awaitUp();
        String epoch = get(broker.open(conversation, 0)).epoch();
        long deadline = System.currentTimeMillis() + 10_000;
        while (received.isEmpty() && System.currentTimeMillis() < deadline) {
            // The pub/sub connection may come back after the command connection: publish until it has.
            get(broker.publish(conversation, epoch, null, bytes("after restart")));
            sleep(20);
        }

        assertThat(received).isNotEmpty();
        assertThat(received.get(0).epoch()).isEqualTo(epoch);
        get(broker.unsubscribe(conversation, listener));
    }

    @Test
    void theHealthCheckFailsFastWhileRedisIsDownAndRecoversWhenItIsBack() throws IOException {
        assertThat(get(broker.health(Duration.ofSeconds(1))).up()).isTrue();

        server.stop();
        long start = System.nanoTime();
        RedisHealth down = get(broker.health(Duration.ofSeconds(2)));
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        try {
            assertThat(down.up()).isFalse();
            assertThat(down.problem()).isNotBlank();
            assertThat(tookMs).isLessThan(2_000);
            Throwable publishFailure = get(broker.publish(conversation(), null, null, bytes("x"))
                    .handle((published, e) -> e));
            assertThat(publishFailure).isNotNull();
        } finally {
            server.start();
        }

        awaitUp();
    }

    private void awaitUp() {
        long deadline = System.currentTimeMillis() + 10_000;
        RedisHealth health = get(broker.health(Duration.ofMillis(500)));
        while (!health.up() && System.currentTimeMillis() < deadline) {
            sleep(20);
            health = get(broker.health(Duration.ofMillis(500)));
        }
        assertThat(health.up()).as("health after Redis came back: %s", health).isTrue();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
