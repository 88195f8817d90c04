package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.ClusterBus.Entry;
import dev.switchboard.core.spi.ClusterBus.History;
import dev.switchboard.core.spi.ClusterBus.Lease;
import dev.switchboard.core.spi.ClusterBus.Publication;
import dev.switchboard.core.spi.ClusterBus.Published;
import dev.switchboard.core.spi.ClusterBus.Taken;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.LongStream;

import static dev.switchboard.cluster.redis.RedisTests.awaitSize;
import static dev.switchboard.cluster.redis.RedisTests.bytes;
import static dev.switchboard.cluster.redis.RedisTests.conversation;
import static dev.switchboard.cluster.redis.RedisTests.get;
import static dev.switchboard.cluster.redis.RedisTests.seqs;
import static dev.switchboard.cluster.redis.RedisTests.sleep;
import static dev.switchboard.cluster.redis.RedisTests.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The bus against a real Redis over a socket, several buses standing for several nodes: write
 * leases, publishes, history, pub/sub, node messages, once-keys and counters.
 */
class RedisClusterBusTest {
    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    /** How long the leases of {@link #fleeting} hold: short, so that tests can let them lapse. */
    static final Duration FLEETING_TTL = Duration.ofMillis(500);
    /** Long enough after {@link #FLEETING_TTL} for a lease not renewed to have lapsed. */
    static final long LAPSE_MS = 900;

    static RedisClusterBus one;
    static RedisClusterBus two;
    /** Keeps 5 events per conversation, for 120 s after the last. */
    static RedisClusterBus bounded;
    /** A node whose leases lapse after {@link #FLEETING_TTL} without renewal. */
    static RedisClusterBus fleeting;

    @BeforeAll
    static void connect() {
        one = RedisTests.connect(server.url(), "node-a");
        two = RedisTests.connect(server.url(), "node-b");
        bounded = RedisTests.connect(RedisClusterConfig.of(server.url(), "node-c").withStreamMax(5)
                .withHistoryTtl(Duration.ofSeconds(120)));
        fleeting = RedisTests.connect(RedisClusterConfig.of(server.url(), "node-f").withLeaseTtl(FLEETING_TTL));
    }

    @AfterAll
    static void close() {
        get(one.close());
        get(two.close());
        get(bounded.close());
        get(fleeting.close());
    }

    private static Lease acquired(RedisClusterBus bus, String conversation) {
        return get(bus.acquire(conversation)).orElseThrow();
    }

    private static Published publish(RedisClusterBus bus, Lease lease, long seq, String payload) {
        return get(bus.publish(lease, seq, bytes(payload)));
    }

    /** Makes {@code bus} the writer of a new conversation and publishes "event 1" to "event n" as seqs 1 to n. */
    private static Lease withEvents(RedisClusterBus bus, String conversation, int n) {
        Lease lease = acquired(bus, conversation);
        for (int seq = 1; seq <= n; seq++) {
            assertThat(publish(bus, lease, seq, "event " + seq)).isEqualTo(Published.PUBLISHED);
        }
        return lease;
    }

    private static List<Long> prevSeqs(List<Entry> entries) {
        return entries.stream().map(Entry::prevSeq).toList();
    }

    @Test
    void aLeaseIsExclusiveAndNamesItsNode() {
        String conversation = conversation();
        Lease lease = acquired(one, conversation);

        assertThat(lease.conversationId()).isEqualTo(conversation);
        assertThat(lease.nodeId()).isEqualTo("node-a");
        assertThat(lease.token()).endsWith("@node-a");
        assertThat(get(two.acquire(conversation))).isEmpty();
        assertThat(get(one.acquire(conversation))).isEmpty();
        assertThat(get(two.holder(conversation))).contains("node-a");
        assertThat(get(two.holder(conversation()))).isEmpty();

        assertThat(get(one.release(lease))).isTrue();
        assertThat(get(two.holder(conversation))).isEmpty();
        Lease next = acquired(two, conversation);
        assertThat(next.nodeId()).isEqualTo("node-b");
        assertThat(next.token()).isNotEqualTo(lease.token());
    }

    @Test
    void aConversationNothingWasPublishedToStartsAtZeroAndIsNeverClean() {
        String conversation = conversation();
        Lease first = acquired(one, conversation);
        assertThat(first.topSeq()).isZero();
        assertThat(first.clean()).isFalse();

        assertThat(get(one.release(first))).isTrue();
        Lease second = acquired(two, conversation);
        assertThat(second.topSeq()).isZero();
        assertThat(second.clean()).isFalse();
    }

    @Test
    void renewalKeepsALeaseAndExpiryFreesIt() {
        String conversation = conversation();
        Lease lease = acquired(fleeting, conversation);
        for (int i = 0; i < 5; i++) {
            sleep(FLEETING_TTL.toMillis() / 3);
            assertThat(get(fleeting.renew(lease))).isTrue();
        }
        assertThat(get(two.acquire(conversation))).isEmpty();

        sleep(LAPSE_MS);
        assertThat(get(fleeting.renew(lease))).isFalse();
        Lease taken = acquired(two, conversation);
        assertThat(taken.token()).isNotEqualTo(lease.token());
        assertThat(get(fleeting.renew(lease))).isFalse();
        assertThat(get(fleeting.release(lease))).isFalse();
        assertThat(get(one.holder(conversation))).contains("node-b");
    }

    @Test
    void aReleaseLetsTheNextWriterGoOnFromTheTopSeqAtOnce() {
        String conversation = conversation();
        Lease first = withEvents(one, conversation, 3);

        assertThat(get(one.release(first))).isTrue();
        assertThat(get(one.release(first))).isFalse();
        Lease next = acquired(two, conversation);
        assertThat(next.topSeq()).isEqualTo(3);
        assertThat(next.clean()).isTrue();

        assertThat(publish(two, next, 4, "event 4")).isEqualTo(Published.PUBLISHED);
        assertThat(get(two.release(next))).isTrue();
        assertThat(acquired(one, conversation)).extracting(Lease::topSeq, Lease::clean).containsExactly(4L, true);
    }

    @Test
    void aWriterWhoseLeaseLapsedLeavesTheConversationNotCleanWhateverTheOneBeforeDid() {
        String conversation = conversation();
        get(one.release(withEvents(one, conversation, 2)));
        Lease dying = acquired(fleeting, conversation);
        assertThat(dying).extracting(Lease::topSeq, Lease::clean).containsExactly(2L, true);
        assertThat(publish(fleeting, dying, 7, "then it died")).isEqualTo(Published.PUBLISHED);
        sleep(LAPSE_MS);

        Lease after = acquired(two, conversation);
        assertThat(after).extracting(Lease::topSeq, Lease::clean).containsExactly(7L, false);

        get(two.release(after));
        Lease silent = acquired(fleeting, conversation);
        assertThat(silent.clean()).isTrue();
        sleep(LAPSE_MS);
        assertThat(acquired(one, conversation)).extracting(Lease::topSeq, Lease::clean).containsExactly(7L, false);
    }

    @Test
    void everyAcquisitionThatIsNotCleanRaisesTheFenceAndACleanOneKeepsIt() {
        String conversation = conversation();
        Lease first = acquired(fleeting, conversation);
        assertThat(first).extracting(Lease::clean, Lease::fence).containsExactly(false, 1L);
        assertThat(publish(fleeting, first, 1, "then it stopped renewing")).isEqualTo(Published.PUBLISHED);
        sleep(LAPSE_MS);

        Lease taker = acquired(two, conversation);
        assertThat(taker).extracting(Lease::clean, Lease::fence).containsExactly(false, 2L);
        assertThat(get(fleeting.raiseFence(first, 9))).as("by a lease no longer held").isFalse();
        assertThat(get(two.raiseFence(taker, 7))).as("to the store's, higher").isTrue();
        assertThat(get(two.raiseFence(taker, 5))).as("never lowered").isTrue();
        assertThat(get(two.release(taker))).isTrue();

        Lease next = acquired(one, conversation);
        assertThat(next).extracting(Lease::clean, Lease::fence).containsExactly(true, 7L);
        assertThat(publish(one, next, 2, "the writer after")).isEqualTo(Published.PUBLISHED);
        assertThat(get(one.release(next))).isTrue();
        assertThat(acquired(two, conversation)).extracting(Lease::clean, Lease::fence).containsExactly(true, 7L);
    }

    @Test
    void aPublishWithAnotherTokenOrALapsedLeaseIsRefusedAndNothingIsKept() {
        String conversation = conversation();
        Lease lease = acquired(fleeting, conversation);
        assertThat(publish(fleeting, lease, 1, "mine")).isEqualTo(Published.PUBLISHED);
        Lease forged = new Lease(conversation, "node-b", "forged@node-b", 1, false, 1);
        assertThat(publish(two, forged, 2, "forged")).isEqualTo(Published.LEASE_LOST);

        sleep(LAPSE_MS);
        assertThat(publish(fleeting, lease, 2, "after the lease lapsed")).isEqualTo(Published.LEASE_LOST);
        Lease next = acquired(two, conversation);
        assertThat(publish(fleeting, lease, 3, "the old writer")).isEqualTo(Published.LEASE_LOST);
        assertThat(publish(two, next, 2, "the new writer")).isEqualTo(Published.PUBLISHED);

        History history = get(one.history(conversation, 0, 10));
        assertThat(history.topSeq()).isEqualTo(2);
        assertThat(history.entries()).extracting(e -> text(e.payload())).containsExactly("mine", "the new writer");
    }

    @Test
    void aSeqNotAboveTheTopIsStaleAndNothingIsKept() {
        String conversation = conversation();
        Lease lease = acquired(one, conversation);

        assertThat(publish(one, lease, 5, "five")).isEqualTo(Published.PUBLISHED);
        assertThat(publish(one, lease, 5, "five again")).isEqualTo(Published.STALE);
        assertThat(publish(one, lease, 3, "three")).isEqualTo(Published.STALE);
        assertThat(publish(one, lease, 6, "six")).isEqualTo(Published.PUBLISHED);
        assertThatThrownBy(() -> one.publish(lease, 0, bytes("zero"))).isInstanceOf(IllegalArgumentException.class);

        History history = get(one.history(conversation, 0, 10));
        assertThat(history.entries()).extracting(Entry::seq, e -> text(e.payload()))
                .containsExactly(tuple(5L, "five"), tuple(6L, "six"));
        assertThat(history.topSeq()).isEqualTo(6);
    }

    @Test
    void seqsMayJumpAndEachEntryCarriesTheSeqBeforeIt() {
        String conversation = conversation();
        Lease lease = acquired(one, conversation);
        long big = 1_000_000_000_000_001L;
        for (long seq : new long[] {5, 70_000, big}) {
            assertThat(publish(one, lease, seq, "at " + seq)).isEqualTo(Published.PUBLISHED);
        }

        History history = get(two.history(conversation, 0, 10));
        assertThat(history.topSeq()).isEqualTo(big);
        assertThat(history.entries()).extracting(Entry::seq, Entry::prevSeq, e -> text(e.payload()))
                .containsExactly(tuple(5L, 0L, "at 5"), tuple(70_000L, 5L, "at 70000"),
                        tuple(big, 70_000L, "at " + big));
        try (var plain = new RedisTests.Plain(server.url())) {
            List<StreamMessage<String, String>> stream = plain.redis.xrange(RedisKeys.stream(conversation),
                    Range.create("-", "+"));
            assertThat(stream).extracting(StreamMessage::getId).containsExactly("5-0", "70000-0", big + "-0");
            assertThat(stream.get(1).getBody()).isEqualTo(Map.of("p", "5", "d", "at 70000"));
            assertThat(plain.redis.hgetall(RedisKeys.meta(conversation))).containsEntry("seq", Long.toString(big));
        }
    }

    @Test
    void theStreamKeepsOnlyTheLatestEntriesUpToItsBoundAndBothKeysLiveForTheHistoryTtl() {
        String conversation = conversation();
        withEvents(bounded, conversation, 8);

        try (var plain = new RedisTests.Plain(server.url())) {
            List<StreamMessage<String, String>> stream = plain.redis.xrange(RedisKeys.stream(conversation),
                    Range.create("-", "+"));
            assertThat(stream).extracting(StreamMessage::getId).containsExactly("4-0", "5-0", "6-0", "7-0", "8-0");
            assertThat(stream.get(0).getBody()).isEqualTo(Map.of("p", "3", "d", "event 4"));
            assertThat(plain.redis.ttl(RedisKeys.stream(conversation))).isBetween(100L, 120L);
            assertThat(plain.redis.ttl(RedisKeys.meta(conversation))).isBetween(100L, 120L);
        }
    }

    @Test
    void historyAfterACursorReturnsTheLaterEntriesAndSaysWhetherTheyContinueIt() {
        String conversation = conversation();
        withEvents(one, conversation, 10);

        History after6 = get(two.history(conversation, 6, 100));
        assertThat(seqs(after6.entries())).containsExactly(7L, 8L, 9L, 10L);
        assertThat(prevSeqs(after6.entries())).containsExactly(6L, 7L, 8L, 9L);
        assertThat(after6.entries()).extracting(e -> text(e.payload())).startsWith("event 7").endsWith("event 10");
        assertThat(after6.topSeq()).isEqualTo(10);
        assertThat(after6.continues(6)).isTrue();
        assertThat(after6.continues(5)).isFalse();

        History twoAfter6 = get(two.history(conversation, 6, 2));
        assertThat(seqs(twoAfter6.entries())).containsExactly(7L, 8L);
        assertThat(twoAfter6.continues(6)).isTrue();
        History after10 = get(two.history(conversation, 10, 100));
        assertThat(after10.entries()).isEmpty();
        assertThat(after10.continues(10)).isTrue();
        assertThat(get(two.history(conversation, 12, 100)).continues(12)).isTrue();
        History unknown = get(two.history(conversation(), 0, 100));
        assertThat(unknown.topSeq()).isZero();
        assertThat(unknown.entries()).isEmpty();
        assertThat(unknown.continues(0)).isTrue();
        assertThatThrownBy(() -> two.history(conversation, -1, 10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCursorBelowWhatTheBoundedStreamStillHoldsDoesNotContinue() {
        String conversation = conversation();
        withEvents(bounded, conversation, 8);

        History after3 = get(bounded.history(conversation, 3, 100));
        assertThat(seqs(after3.entries())).containsExactly(4L, 5L, 6L, 7L, 8L);
        assertThat(after3.continues(3)).isTrue();
        History after1 = get(bounded.history(conversation, 1, 100));
        assertThat(seqs(after1.entries())).containsExactly(4L, 5L, 6L, 7L, 8L);
        assertThat(after1.continues(1)).isFalse();
        assertThat(get(bounded.history(conversation, 0, 100)).continues(0)).isFalse();
    }

    @Test
    void aSubscriberReceivesWhatAnotherNodePublishesInOrderWithTheSeqBeforeEach() {
        String conversation = conversation();
        List<Entry> received = new CopyOnWriteArrayList<>();
        Consumer<Entry> listener = received::add;
        get(two.subscribe(conversation, listener));

        Lease lease = acquired(one, conversation);
        for (int i = 1; i <= 200; i++) {
            one.publish(lease, 2L * i, bytes("event " + i));
        }
        awaitSize(received, 200);

        assertThat(seqs(received)).containsExactlyElementsOf(LongStream.rangeClosed(1, 200).map(i -> 2 * i).boxed()
                .toList());
        assertThat(prevSeqs(received)).containsExactlyElementsOf(LongStream.range(0, 200).map(i -> 2 * i).boxed()
                .toList());
        assertThat(received).extracting(e -> text(e.payload())).startsWith("event 1", "event 2").endsWith("event 200");
        get(two.unsubscribe(conversation, listener));
    }

    @Test
    void severalEventsPublishedInOneStepArriveAndAreKeptInOrderEachWithTheSeqBeforeIt() {
        String conversation = conversation();
        List<Entry> received = new CopyOnWriteArrayList<>();
        Consumer<Entry> listener = received::add;
        get(two.subscribe(conversation, listener));
        Lease lease = acquired(one, conversation);
        publish(one, lease, 3, "three");

        Published many = get(one.publish(lease, List.of(new Publication(4, bytes("four")),
                new Publication(5, bytes("five")), new Publication(9, bytes("nine")))));
        assertThat(many).isEqualTo(Published.PUBLISHED);
        awaitSize(received, 4);
        assertThat(seqs(received)).containsExactly(3L, 4L, 5L, 9L);
        assertThat(prevSeqs(received)).containsExactly(0L, 3L, 4L, 5L);
        History h = get(one.history(conversation, 3, 10));
        assertThat(h.topSeq()).isEqualTo(9);
        assertThat(h.continues(3)).isTrue();
        assertThat(h.entries()).extracting(e -> text(e.payload())).containsExactly("four", "five", "nine");

        Published stale = get(one.publish(lease, List.of(new Publication(10, bytes("ten")),
                new Publication(10, bytes("ten again")))));
        assertThat(stale).as("a seq that does not rise refuses the whole publish").isEqualTo(Published.STALE);
        assertThat(get(one.history(conversation, 9, 10)).entries()).isEmpty();
        assertThat(get(one.history(conversation, 0, 10)).topSeq()).isEqualTo(9);
        get(two.unsubscribe(conversation, listener));
    }

    @Test
    void aSubscriptionHoldsWhenItsFutureCompletesSoAHistoryReadAfterItMissesNothing() {
        for (int round = 0; round < 20; round++) {
            String conversation = conversation();
            Lease lease = acquired(one, conversation);
            List<Entry> received = new CopyOnWriteArrayList<>();
            Published right = get(two.subscribe(conversation, received::add)
                    .thenCompose(v -> one.publish(lease, 1, bytes("right after"))));
            assertThat(right).isEqualTo(Published.PUBLISHED);
            awaitSize(received, 1);
        }

        String conversation = conversation();
        Lease lease = acquired(one, conversation);
        int n = 2_000;
        CompletableFuture<Published> last = CompletableFuture.supplyAsync(() -> {
            CompletableFuture<Published> sent = null;
            for (int seq = 1; seq <= n; seq++) {
                sent = one.publish(lease, seq, bytes("event " + seq));
            }
            return sent;
        }).thenCompose(sent -> sent);
        List<Entry> live = new CopyOnWriteArrayList<>();
        get(two.subscribe(conversation, live::add));
        History history = get(two.history(conversation, 0, n));
        assertThat(get(last)).isEqualTo(Published.PUBLISHED);
        long deadline = System.currentTimeMillis() + 10_000;
        while (!seqs(live).contains((long) n) && System.currentTimeMillis() < deadline) {
            sleep(5);
        }

        Set<Long> seen = new TreeSet<>(seqs(history.entries()));
        seen.addAll(seqs(live));
        assertThat(seen).containsExactlyElementsOf(LongStream.rangeClosed(1, n).boxed().toList());
    }

    @Test
    void unsubscribingTheLastListenerLeavesTheChannelAndStopsDelivery() {
        String conversation = conversation();
        Lease lease = acquired(one, conversation);
        List<Entry> first = new CopyOnWriteArrayList<>();
        List<Entry> second = new CopyOnWriteArrayList<>();
        Consumer<Entry> firstListener = first::add;
        Consumer<Entry> secondListener = second::add;
        try (var plain = new RedisTests.Plain(server.url())) {
            get(two.subscribe(conversation, firstListener));
            get(two.subscribe(conversation, secondListener));
            assertThat(plain.redis.pubsubNumsub(RedisKeys.channel(conversation)))
                    .containsEntry(RedisKeys.channel(conversation), 1L);

            publish(one, lease, 1, "both");
            awaitSize(first, 1);
            awaitSize(second, 1);
            get(two.unsubscribe(conversation, firstListener));
            publish(one, lease, 2, "second only");
            awaitSize(second, 2);
            get(two.unsubscribe(conversation, secondListener));
            assertThat(plain.redis.pubsubNumsub(RedisKeys.channel(conversation)))
                    .containsEntry(RedisKeys.channel(conversation), 0L);
            publish(one, lease, 3, "nobody");
            sleep(200);
        }

        assertThat(first).extracting(e -> text(e.payload())).containsExactly("both");
        assertThat(second).extracting(e -> text(e.payload())).containsExactly("both", "second only");
    }

    @Test
    void aKeysPlacesAreCountedOnEveryNodeAndGivenBack() {
        String key = "client-" + conversation();
        assertThat(get(one.takePlace(key, 3))).isTrue();
        assertThat(get(one.takePlace(key, 3))).isTrue();
        assertThat(get(two.takePlace(key, 3))).as("the third place, on another node").isTrue();
        assertThat(get(two.takePlace(key, 3))).as("every place taken, on either node").isFalse();
        assertThat(get(one.takePlace(key, 3))).isFalse();
        get(one.givePlace(key));
        assertThat(get(two.takePlace(key, 3))).as("a place given back on one node is free on another").isTrue();
        assertThat(get(two.takePlace("other-" + key, 1))).as("keys count apart").isTrue();
    }

    @Test
    void thePlacesOfANodeThatStoppedAreFreeOnceItsPresenceLapses() {
        String key = "client-" + conversation();
        RedisClusterBus doomed = RedisTests.connect(RedisClusterConfig.of(server.url(), "node-doomed")
                .withLeaseTtl(FLEETING_TTL));
        assertThat(get(doomed.takePlace(key, 2))).isTrue();
        assertThat(get(doomed.takePlace(key, 2))).isTrue();
        sleep(FLEETING_TTL.toMillis());
        assertThat(get(fleeting.takePlace(key, 2))).as("the stopping node's places count while it is present")
                .isFalse();
        get(doomed.close());
        // Presence lapses three lease times after the last renewal; the other node sees it at its next one.
        sleep(FLEETING_TTL.toMillis() * 3 + LAPSE_MS);
        assertThat(get(fleeting.takePlace(key, 2))).isTrue();
        assertThat(get(fleeting.takePlace(key, 2))).isTrue();
        assertThat(get(fleeting.takePlace(key, 2))).isFalse();
    }

    @Test
    void aWriterThatStartedAboveTheTopLetsGoAtItsOwnTopSoTheNextGoesOnFromThere() {
        String conversation = conversation();
        Lease first = acquired(one, conversation);
        publish(one, first, 3, "three");
        assertThat(get(one.release(first, 70_000))).isTrue();
        assertThat(acquired(two, conversation)).extracting(Lease::topSeq, Lease::clean)
                .as("clean, at the writer's own top").containsExactly(70_000L, true);
    }

    @Test
    void aReleaseTakesEffectAfterThePublishesSentBeforeIt() {
        String conversation = conversation();
        Lease lease = acquired(one, conversation);
        List<CompletableFuture<Published>> sent = new ArrayList<>();
        for (int seq = 1; seq <= 500; seq++) {
            sent.add(one.publish(lease, seq, bytes("event " + seq)));
        }
        CompletableFuture<Boolean> released = one.release(lease);

        assertThat(get(released)).isTrue();
        assertThat(sent).allSatisfy(f -> assertThat(get(f)).isEqualTo(Published.PUBLISHED));
        assertThat(acquired(two, conversation)).extracting(Lease::topSeq, Lease::clean).containsExactly(500L, true);
    }

    @Test
    void aReaperTakesALapsedLeaseOnceAcrossNodesWithWhereItsSeqsStand() {
        String lapsing = conversation();
        String live = conversation();
        String released = conversation();
        Lease dead = acquired(fleeting, lapsing);
        publish(fleeting, dead, 4, "four");
        publish(fleeting, dead, 9, "nine");
        acquired(one, live);
        get(fleeting.release(acquired(fleeting, released)));
        sleep(LAPSE_MS);

        var fromOne = one.takeExpired(100);
        var fromTwo = two.takeExpired(100);
        List<Taken> taken = new ArrayList<>(get(fromOne));
        taken.addAll(get(fromTwo));

        List<Taken> ours = taken.stream()
                .filter(t -> Set.of(lapsing, live, released).contains(t.lease().conversationId())).toList();
        assertThat(ours).hasSize(1);
        Taken t = ours.get(0);
        assertThat(t.lapsedNodeId()).isEqualTo("node-f");
        assertThat(t.lease()).extracting(Lease::conversationId, Lease::topSeq, Lease::clean, Lease::fence)
                .as("not clean, so the fence rises above the dead writer's").containsExactly(lapsing, 9L, false,
                        dead.fence() + 1);
        RedisClusterBus taker = t.lease().nodeId().equals("node-a") ? one : two;
        assertThat(get(taker.holder(lapsing))).contains(t.lease().nodeId());
        assertThat(publish(taker, t.lease(), 10, "ten")).isEqualTo(Published.PUBLISHED);
        assertThat(publish(fleeting, dead, 10, "ten")).as("the dead writer's lease").isEqualTo(Published.LEASE_LOST);
        assertThat(get(one.takeExpired(100))).extracting(x -> x.lease().conversationId()).doesNotContain(lapsing);
    }

    @Test
    void aLeaseRenewedWhileTheIndexLaggedIsNotTakenAndStaysIndexed() {
        String conversation = conversation();
        Lease lease = acquired(fleeting, conversation);
        try (var plain = new RedisTests.Plain(server.url())) {
            plain.redis.pexpire(RedisKeys.lease(conversation), 30_000);
            sleep(LAPSE_MS);

            assertThat(get(two.takeExpired(100))).extracting(x -> x.lease().conversationId())
                    .doesNotContain(conversation);
            assertThat(plain.redis.zscore(RedisKeys.LEASE_INDEX,
                    RedisKeys.leaseIndexMember(conversation, lease.token()))).isNotNull();
            assertThat(get(two.holder(conversation))).contains("node-f");
        }
    }

    @Test
    void aKeyIsClaimedOnceInTheClusterWithinItsTtl() {
        String key = "approval:" + conversation();
        Duration ttl = Duration.ofMillis(300);

        assertThat(get(one.claimOnce(key, ttl))).isTrue();
        assertThat(get(two.claimOnce(key, ttl))).isFalse();
        assertThat(get(one.claimOnce(key, ttl))).isFalse();
        sleep(500);
        assertThat(get(two.claimOnce(key, ttl))).isTrue();
    }

    @Test
    void aWindowCountsAcrossNodesAndStartsAgainWhenItEnds() {
        String key = "client:" + conversation();
        Duration window = Duration.ofMillis(300);

        List<Long> counts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            counts.add(get(one.count(key, window)));
            counts.add(get(two.count(key, window)));
        }
        assertThat(counts).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        sleep(400);
        assertThat(get(two.count(key, window))).isEqualTo(1);
    }

    @Test
    void aMessageSentToANodeReachesThatNodesListenerOnly() {
        RedisClusterBus x = RedisTests.connect(server.url(), "node-x");
        RedisClusterBus y = RedisTests.connect(server.url(), "node-y");
        try {
            List<String> toX = new CopyOnWriteArrayList<>();
            List<String> toY = new CopyOnWriteArrayList<>();
            get(x.listen(m -> toX.add(text(m))));
            get(y.listen(m -> toY.add(text(m))));

            get(x.send("node-y", bytes("from x")));
            get(y.send("node-x", bytes("from y")));
            get(y.send("node-y", bytes("to itself")));
            get(x.send("node-gone", bytes("to nobody")));
            awaitSize(toX, 1);
            awaitSize(toY, 2);

            assertThat(toX).containsExactly("from y");
            assertThat(toY).containsExactly("from x", "to itself");
            assertThatThrownBy(() -> x.listen(m -> { })).isInstanceOf(IllegalStateException.class);
        } finally {
            get(x.close());
            get(y.close());
        }
    }

    @Test
    void thereIsNoProblemWhileRedisAnswers() {
        assertThat(get(one.problem(Duration.ofSeconds(1)))).isNull();
    }

    @Test
    void aLiveMessageIsReadAsSeqPrevAndPayload() {
        Entry entry = RedisClusterBus.parse(bytes("12:7:a:b"));
        assertThat(entry).extracting(Entry::seq, Entry::prevSeq, e -> text(e.payload()))
                .containsExactly(12L, 7L, "a:b");
        assertThat(RedisClusterBus.parse(bytes("3:0:")).payload()).isEmpty();
        for (String bad : List.of("x:1:p", ":1:p", "1::p", "1:2", "1:-2:p", "12345678901234567890:1:p", "")) {
            assertThat(RedisClusterBus.parse(bytes(bad))).as(bad).isNull();
        }
    }
}
