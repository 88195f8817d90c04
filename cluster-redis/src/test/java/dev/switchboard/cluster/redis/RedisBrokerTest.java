package dev.switchboard.cluster.redis;

import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.LongStream;

import static dev.switchboard.cluster.redis.RedisTests.bytes;
import static dev.switchboard.cluster.redis.RedisTests.conversation;
import static dev.switchboard.cluster.redis.RedisTests.get;
import static dev.switchboard.cluster.redis.RedisTests.seqs;
import static dev.switchboard.cluster.redis.RedisTests.text;
import static org.assertj.core.api.Assertions.assertThat;

/** The broker against a real Redis over a socket: seqs, streams, history, leases, pub/sub, counters. */
class RedisBrokerTest {
    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    static RedisBroker one;
    static RedisBroker two;
    /** Keeps 5 events per conversation. */
    static RedisBroker bounded;

    @BeforeAll
    static void connect() {
        one = RedisTests.connect(server.url());
        two = RedisTests.connect(server.url());
        bounded = RedisTests.connect(RedisBrokerConfig.of(server.url(), "bounded").withStreamMax(5));
    }

    @AfterAll
    static void close() {
        get(one.close());
        get(two.close());
        get(bounded.close());
    }

    /** Checks a history's status and the seqs of its entries; answers it. */
    private static RedisHistory expect(RedisHistory history, RedisHistory.Status status, Long... seqs) {
        assertThat(history.status()).isEqualTo(status);
        assertThat(seqs(history.entries())).containsExactly(seqs);
        return history;
    }

    /** Opens a new conversation and publishes "event 1" to "event {@code n}" in it; answers its epoch. */
    private static String openWithEvents(RedisBroker broker, String conversation, int n) {
        String epoch = get(broker.open(conversation, 0)).epoch();
        for (int i = 1; i <= n; i++) {
            publish(broker, conversation, epoch, null, "event " + i);
        }
        return epoch;
    }

    private static RedisPublished publish(RedisBroker broker, String conversation, String epoch, String token,
                                          String payload) {
        return get(broker.publish(conversation, epoch, token, bytes(payload)));
    }

    @Test
    void seqsCountFromOneInEachConversation() {
        String a = conversation();
        String b = conversation();
        RedisPosition opened = get(one.open(a, 0));
        get(one.open(b, 0));

        assertThat(opened.topSeq()).isZero();
        assertThat(List.of(publish(one, a, null, null, "x").seq(), publish(one, a, null, null, "y").seq(),
                publish(two, a, opened.epoch(), null, "z").seq())).containsExactly(1L, 2L, 3L);
        assertThat(publish(one, b, null, null, "w")).isEqualTo(new RedisPublished(
                RedisPublished.Status.PUBLISHED, 1, get(one.open(b, 0)).epoch()));
    }

    @Test
    void concurrentPublishersOnTwoClientsGetEverySeqOnceAndEachClientsInTheOrderItSent() throws Exception {
        String conversation = conversation();
        get(one.open(conversation, 0));
        int each = 2_000;
        List<List<Long>> got = Collections.synchronizedList(new ArrayList<>());
        List<Thread> publishers = new ArrayList<>();
        for (RedisBroker broker : List.of(one, two)) {
            publishers.add(new Thread(() -> {
                List<CompletableFuture<RedisPublished>> sent = new ArrayList<>();
                for (int i = 0; i < each; i++) {
                    sent.add(broker.publish(conversation, null, null, bytes("event " + i)));
                }
                got.add(sent.stream().map(f -> get(f).seq()).toList());
            }));
        }
        publishers.forEach(Thread::start);
        for (Thread publisher : publishers) {
            publisher.join();
        }
        assertThat(got).hasSize(2);

        Set<Long> all = new TreeSet<>();
        for (List<Long> seqs : got) {
            assertThat(seqs).isSorted();
            all.addAll(seqs);
        }
        assertThat(all).containsExactlyElementsOf(LongStream.rangeClosed(1, 2L * each).boxed().toList());
        RedisHistory history = get(one.history(conversation, null, 0, 10 * each));
        assertThat(seqs(history.entries())).containsExactlyElementsOf(all);
        assertThat(history.topSeq()).isEqualTo(2L * each);
    }

    @Test
    void theStreamHoldsEachEventUnderItsSeqAndOnlyTheLatestUpToItsBound() {
        try (var plain = new RedisTests.Plain(server.url())) {
            String conversation = conversation();
            openWithEvents(bounded, conversation, 8);

            List<StreamMessage<String, String>> stream = plain.redis.xrange(RedisKeys.stream(conversation),
                    Range.create("-", "+"));
            assertThat(stream).extracting(StreamMessage::getId).containsExactly("4-0", "5-0", "6-0", "7-0", "8-0");
            assertThat(stream).extracting(StreamMessage::getBody)
                    .containsExactly(Map.of("d", "event 4"), Map.of("d", "event 5"), Map.of("d", "event 6"),
                            Map.of("d", "event 7"), Map.of("d", "event 8"));
            assertThat(plain.redis.ttl(RedisKeys.stream(conversation)))
                    .isBetween(1L, RedisBrokerConfig.DEFAULT_HISTORY_TTL.toSeconds());
            assertThat(plain.redis.hgetall(RedisKeys.meta(conversation))).containsEntry("seq", "8");
        }
    }

    @Test
    void historyFromACursorReturnsExactlyTheLaterEntries() {
        String conversation = conversation();
        String epoch = openWithEvents(one, conversation, 10);

        RedisHistory after6 = expect(get(two.history(conversation, epoch, 6, 100)), RedisHistory.Status.CONTINUOUS,
                7L, 8L, 9L, 10L);
        assertThat(after6.entries()).extracting(e -> text(e.payload()))
                .containsExactly("event 7", "event 8", "event 9", "event 10");
        assertThat(after6.epoch()).isEqualTo(epoch);
        assertThat(after6.topSeq()).isEqualTo(10);
        assertThat(seqs(get(two.history(conversation, epoch, 6, 2)).entries())).containsExactly(7L, 8L);
        expect(get(two.history(conversation, epoch, 10, 100)), RedisHistory.Status.CONTINUOUS);
        assertThat(get(two.history(conversation, epoch, 11, 100)).status()).isEqualTo(RedisHistory.Status.AHEAD);
        assertThat(get(two.history(conversation(), null, 0, 100)).status())
                .isEqualTo(RedisHistory.Status.NOT_OPEN);
    }

    @Test
    void aCursorBelowTheStreamsOldestEntryIsSignalledWithWhatTheStreamStillHolds() {
        String conversation = conversation();
        String epoch = openWithEvents(bounded, conversation, 8);

        RedisHistory after1 = expect(get(bounded.history(conversation, epoch, 1, 100)),
                RedisHistory.Status.TRUNCATED, 4L, 5L, 6L, 7L, 8L);
        assertThat(after1.oldestSeq()).isEqualTo(4);
        expect(get(bounded.history(conversation, epoch, 3, 100)), RedisHistory.Status.CONTINUOUS,
                4L, 5L, 6L, 7L, 8L);
    }

    @Test
    void openingWithTheDurableTopContinuesItsSeqsAndAnOpenConversationKeepsItsPosition() {
        String conversation = conversation();
        RedisPosition opened = get(one.open(conversation, 100));

        assertThat(opened.topSeq()).isEqualTo(100);
        expect(get(one.history(conversation, opened.epoch(), 40, 10)), RedisHistory.Status.TRUNCATED);
        assertThat(publish(one, conversation, opened.epoch(), null, "x").seq()).isEqualTo(101);
        assertThat(get(two.open(conversation, 7))).isEqualTo(new RedisPosition(opened.epoch(), 101));
    }

    @Test
    void aPublishWithAnotherEpochOrToAConversationNotOpenIsRefusedAndStoresNothing() {
        String conversation = conversation();
        assertThat(publish(one, conversation, null, null, "x").status())
                .isEqualTo(RedisPublished.Status.NOT_OPEN);
        String epoch = get(one.open(conversation, 0)).epoch();

        assertThat(publish(one, conversation, "another", null, "x"))
                .isEqualTo(new RedisPublished(RedisPublished.Status.EPOCH_CHANGED, 0, epoch));
        assertThat(get(one.history(conversation, "another", 0, 10)).status())
                .isEqualTo(RedisHistory.Status.EPOCH_CHANGED);
        assertThat(get(one.history(conversation, epoch, 0, 10)).topSeq()).isZero();
    }

    @Test
    void aLeaseIsExclusiveRenewalExtendsItAndExpiryFreesIt() throws InterruptedException {
        String conversation = conversation();
        Duration ttl = Duration.ofMillis(400);
        RedisLease lease = get(one.acquireLease(conversation, "node-a", ttl)).orElseThrow();

        assertThat(lease.nodeId()).isEqualTo("node-a");
        assertThat(get(two.acquireLease(conversation, "node-b", ttl))).isEmpty();
        for (int i = 0; i < 4; i++) {
            Thread.sleep(200);
            assertThat(get(one.renewLease(lease, ttl))).isTrue();
        }
        assertThat(get(two.acquireLease(conversation, "node-b", ttl))).isEmpty();
        Thread.sleep(600);
        assertThat(get(one.renewLease(lease, ttl))).isFalse();
        RedisLease taken = get(two.acquireLease(conversation, "node-b", ttl)).orElseThrow();
        assertThat(taken.token()).isNotEqualTo(lease.token());
        assertThat(get(one.releaseLease(lease))).isFalse();
        assertThat(get(two.releaseLease(taken))).isTrue();
        assertThat(get(one.acquireLease(conversation, "node-a", ttl))).isPresent();
    }

    @Test
    void aPublishWithALostOrForeignLeaseIsRefusedAndStoresNothing() {
        String conversation = conversation();
        String epoch = get(one.open(conversation, 0)).epoch();
        RedisLease lease = get(one.acquireLease(conversation, "node-a", Duration.ofSeconds(10))).orElseThrow();

        assertThat(publish(one, conversation, epoch, lease.token(), "mine").seq()).isEqualTo(1);
        assertThat(publish(two, conversation, epoch, "forged@node-b", "foreign").status())
                .isEqualTo(RedisPublished.Status.LEASE_LOST);
        assertThat(get(one.releaseLease(lease))).isTrue();
        assertThat(publish(one, conversation, epoch, lease.token(), "after release").status())
                .isEqualTo(RedisPublished.Status.LEASE_LOST);
        RedisLease next = get(two.acquireLease(conversation, "node-b", Duration.ofSeconds(10))).orElseThrow();
        assertThat(publish(one, conversation, epoch, lease.token(), "stale owner").status())
                .isEqualTo(RedisPublished.Status.LEASE_LOST);
        assertThat(publish(two, conversation, epoch, next.token(), "new owner").seq()).isEqualTo(2);

        assertThat(get(one.history(conversation, epoch, 0, 10)).entries()).extracting(e -> text(e.payload()))
                .containsExactly("mine", "new owner");
    }

    @Test
    void aReaperClaimsEachLapsedLeaseOnceAndNeitherLiveNorReleasedOnes() throws InterruptedException {
        String lapsing = conversation();
        String live = conversation();
        String released = conversation();
        RedisLease dead = get(one.acquireLease(lapsing, "node-a", Duration.ofMillis(150))).orElseThrow();
        get(one.acquireLease(live, "node-a", Duration.ofSeconds(30))).orElseThrow();
        RedisLease ended = get(one.acquireLease(released, "node-a", Duration.ofMillis(150))).orElseThrow();
        get(one.releaseLease(ended));
        Thread.sleep(300);

        var fromOne = one.claimExpiredLeases(100);
        var fromTwo = two.claimExpiredLeases(100);
        List<RedisLease> claimed = new ArrayList<>(get(fromOne));
        claimed.addAll(get(fromTwo));

        assertThat(claimed).filteredOn(l -> Set.of(lapsing, live, released).contains(l.conversationId()))
                .containsExactly(dead);
        assertThat(get(one.claimExpiredLeases(100))).doesNotContain(dead);
    }

    @Test
    void aLeaseRenewedWhileTheIndexLaggedIsNotClaimedAndStaysIndexed() throws InterruptedException {
        String conversation = conversation();
        RedisLease lease = get(one.acquireLease(conversation, "node-a", Duration.ofMillis(100))).orElseThrow();
        try (var plain = new RedisTests.Plain(server.url())) {
            plain.redis.pexpire(RedisKeys.lease(conversation), 30_000);
            Thread.sleep(200);

            assertThat(get(two.claimExpiredLeases(100))).doesNotContain(lease);
            assertThat(plain.redis.zscore(RedisKeys.LEASE_INDEX, lease.indexMember())).isNotNull();
        }
    }

    @Test
    void aSubscriberReceivesWhatAnotherClientPublishesInOrder() {
        String conversation = conversation();
        String epoch = get(one.open(conversation, 0)).epoch();
        List<RedisLiveMessage> received = new CopyOnWriteArrayList<>();
        Consumer<RedisLiveMessage> listener = received::add;
        get(two.subscribe(conversation, listener));

        for (int i = 1; i <= 200; i++) {
            one.publish(conversation, epoch, null, bytes("event " + i));
        }
        awaitSize(received, 200);

        assertThat(received).extracting(RedisLiveMessage::seq)
                .containsExactlyElementsOf(LongStream.rangeClosed(1, 200).boxed().toList());
        assertThat(received).extracting(m -> text(m.payload())).startsWith("event 1", "event 2").endsWith("event 200");
        assertThat(received).allSatisfy(m -> {
            assertThat(m.epoch()).isEqualTo(epoch);
            assertThat(m.conversationId()).isEqualTo(conversation);
        });
        get(two.unsubscribe(conversation, listener));
    }

    @Test
    void unsubscribingTheLastListenerLeavesTheChannelAndStopsDelivery() throws InterruptedException {
        String conversation = conversation();
        String epoch = get(one.open(conversation, 0)).epoch();
        List<RedisLiveMessage> first = new CopyOnWriteArrayList<>();
        List<RedisLiveMessage> second = new CopyOnWriteArrayList<>();
        Consumer<RedisLiveMessage> firstListener = first::add;
        Consumer<RedisLiveMessage> secondListener = second::add;
        try (var plain = new RedisTests.Plain(server.url())) {
            get(two.subscribe(conversation, firstListener));
            get(two.subscribe(conversation, secondListener));
            assertThat(plain.redis.pubsubNumsub(RedisKeys.channel(conversation)))
                    .containsEntry(RedisKeys.channel(conversation), 1L);

            publish(one, conversation, epoch, null, "both");
            awaitSize(first, 1);
            awaitSize(second, 1);
            get(two.unsubscribe(conversation, firstListener));
            publish(one, conversation, epoch, null, "second only");
            awaitSize(second, 2);
            get(two.unsubscribe(conversation, secondListener));
            assertThat(plain.redis.pubsubNumsub(RedisKeys.channel(conversation)))
                    .containsEntry(RedisKeys.channel(conversation), 0L);
            publish(one, conversation, epoch, null, "nobody");
            Thread.sleep(200);
        }

        assertThat(first).extracting(m -> text(m.payload())).containsExactly("both");
        assertThat(second).extracting(m -> text(m.payload())).containsExactly("both", "second only");
    }

    @Test
    void aWindowCountsAcrossClientsAndStartsAgainWhenItEnds() throws InterruptedException {
        String key = "client:" + conversation();
        Duration window = Duration.ofMillis(300);

        List<Long> counts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            counts.add(get(one.incrementWindow(key, window)));
            counts.add(get(two.incrementWindow(key, window)));
        }
        assertThat(counts).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        Thread.sleep(400);
        assertThat(get(two.incrementWindow(key, window))).isEqualTo(1);
    }

    @Test
    void theHealthCheckAnswersUpWhileRedisRuns() {
        RedisHealth health = get(one.health(Duration.ofSeconds(1)));
        assertThat(health.up()).isTrue();
        assertThat(health.problem()).isNull();
    }

    static void awaitSize(List<?> list, int size) {
        long deadline = System.currentTimeMillis() + 10_000;
        while (list.size() < size && System.currentTimeMillis() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        assertThat(list).hasSize(size);
    }
}
