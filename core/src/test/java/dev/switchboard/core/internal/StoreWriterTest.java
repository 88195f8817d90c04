package dev.switchboard.core.internal;

import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.spi.ConversationRecord;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Group commit: a batch that found the writer busy waits for more writes; writes that trickle in are
 * committed some time apart; a quiet write commits at once.
 */
class StoreWriterTest {
    /** Long enough that no scheduling delay of a busy machine looks like the end of the wait. */
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** As long, for the tests of the spacing between commits; the others take the gateway's. */
    private static final long LONG_SPACING_NANOS = TimeUnit.SECONDS.toNanos(3);

    private final List<Integer> batches = new CopyOnWriteArrayList<>();
    private final AtomicInteger filled = new AtomicInteger();
    private final CountDownLatch firstWriteMayEnd = new CountDownLatch(1);
    private final InMemoryConversationStore inner = new InMemoryConversationStore();
    /** Records how many writes each committed batch held; the first commit waits for the test. */
    private final ConversationStore store = (ConversationStore) Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {ConversationStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("write")) {
                    batches.add(filled.getAndSet(0));
                    if (batches.size() == 1) {
                        firstWriteMayEnd.await();
                    }
                }
                try {
                    return method.invoke(inner, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
    private final StoreWriter writer = new StoreWriter(store, new HubMetrics(new SimpleMeterRegistry()), LINGER_NANOS,
            TimeUnit.MILLISECONDS.toNanos(5));
    private int conversations;

    @AfterEach
    void stop() throws Exception {
        firstWriteMayEnd.countDown();
        writer.stop().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aBatchThatFoundManyWritesQueuedWaitsForMoreAndCommitsThemTogether() throws Exception {
        CountDownLatch firstCommitted = new CountDownLatch(1);
        writer.write(this::fill, firstCommitted::countDown);
        awaitBatches(1);
        // 64 writes queue up while the first commit is held back: the next batch finds them all.
        for (int i = 0; i < 64; i++) {
            writer.write(this::fill, null);
        }
        firstWriteMayEnd.countDown();
        assertThat(firstCommitted.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(200);
        CountDownLatch lateCommitted = new CountDownLatch(1);
        writer.write(this::fill, lateCommitted::countDown);
        assertThat(lateCommitted.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(batches).as("the write that came 200 ms later is committed with the 64").containsExactly(1, 65);
    }

    @Test
    void aLingeringBatchCommitsOnceAFullBatchIsQueued() throws Exception {
        TestSource source = new TestSource();
        writer.write(this::fill, null);
        awaitBatches(1);
        // Held back by the first commit: enough writes that the next batch waits for more.
        for (int i = 0; i < 64; i++) {
            source.add(StoreWriter.UNFENCED);
        }
        firstWriteMayEnd.countDown();
        Thread.sleep(200);
        // The source is queued already: its writes add no op, yet the full batch ends the wait.
        long start = System.nanoTime();
        for (int i = 64; i < StoreWriter.MAX_BATCH; i++) {
            source.add(StoreWriter.UNFENCED);
        }
        awaitBatches(2);
        assertThat(System.nanoTime() - start).as("no wait for the rest of the linger").isLessThan(LINGER_NANOS / 2);
        assertThat(batches).containsExactly(1, StoreWriter.MAX_BATCH);
    }

    @Test
    void anActionQueuedWhileABatchWaitsForMoreEndsTheWait() throws Exception {
        queueABusyBatchBehindTheFirstCommit();
        firstWriteMayEnd.countDown();
        Thread.sleep(200);
        CountDownLatch ran = new CountDownLatch(1);
        long start = System.nanoTime();
        writer.run(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(System.nanoTime() - start).as("someone waits: no wait for more writes").isLessThan(LINGER_NANOS / 2);
        assertThat(batches).containsExactly(1, 64);
    }

    @Test
    void writesQueuedWhileABatchWaitsForMoreDoNotWakeTheWriter() throws Exception {
        queueABusyBatchBehindTheFirstCommit();
        firstWriteMayEnd.countDown();
        Thread.sleep(200);
        // Each finds the queue empty (a conversation's first write since its last batch, a history message).
        for (int i = 0; i < 50; i++) {
            writer.write(this::fill, null);
            Thread.sleep(2);
        }
        CountDownLatch ran = new CountDownLatch(1);
        writer.run(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(batches).as("one batch: the 64 and the 50 that came while it waited").containsExactly(1, 114);
        assertThat(writer.lingerWakeUps()).as("woken by the action alone, not by each write").isLessThanOrEqualTo(2);
    }

    @Test
    void anActionQueuedWithTheWritesABatchFindsKeepsItFromWaiting() throws Exception {
        queueABusyBatchBehindTheFirstCommit();
        // Behind those writes someone who waits for them to be stored; the next batch finds them all at once.
        CountDownLatch ran = new CountDownLatch(1);
        writer.run(ran::countDown);
        long start = System.nanoTime();
        firstWriteMayEnd.countDown();
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(System.nanoTime() - start).as("someone waits: no wait for more writes").isLessThan(LINGER_NANOS / 2);
        assertThat(batches).containsExactly(1, 64);
    }

    @Test
    void aQuietWriteCommitsAtOnce() throws Exception {
        firstWriteMayEnd.countDown();
        CountDownLatch committed = new CountDownLatch(1);
        long start = System.nanoTime();
        writer.write(this::fill, committed::countDown);
        assertThat(committed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(System.nanoTime() - start).as("no wait for more writes").isLessThan(LINGER_NANOS / 2);
        assertThat(batches).containsExactly(1);
    }

    @Test
    void aSourceQueuedOnceCommitsEveryWriteItHeldWhenTheWriterCameToIt() throws Exception {
        TestSource source = new TestSource();
        writer.write(this::fill, null);
        awaitBatches(1);
        // Held back by the first commit: three writes of one source, queued once, then an action.
        source.add(StoreWriter.UNFENCED);
        source.add(StoreWriter.UNFENCED);
        source.add(StoreWriter.UNFENCED);
        CountDownLatch actionRan = new CountDownLatch(1);
        List<Integer> committedWhenActionRan = new CopyOnWriteArrayList<>();
        writer.run(() -> {
            committedWhenActionRan.add(source.committed.get());
            actionRan.countDown();
        });
        firstWriteMayEnd.countDown();
        assertThat(actionRan.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(source.queued).as("queued once, when its first write came").hasValue(1);
        assertThat(batches).containsExactly(1, 3);
        assertThat(committedWhenActionRan).as("the action runs after the writes queued before it").containsExactly(3);
    }

    @Test
    void writesOfOneConversationUnderTwoFencesNeverShareABatch() throws Exception {
        TestSource source = new TestSource();
        writer.write(this::fill, null);
        awaitBatches(1);
        source.add(7);
        source.add(7);
        source.add(8);
        CountDownLatch done = new CountDownLatch(1);
        writer.run(done::countDown);
        firstWriteMayEnd.countDown();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(batches).as("the fence's change commits what came before it").containsExactly(1, 2, 1);
        assertThat(source.committed).hasValue(3);
    }

    @Test
    void writesThatTrickleInRightAfterACommitWaitForTheSpacingAndCommitTogether() throws Exception {
        long start = System.nanoTime();
        StoreWriter spaced = spacedWriterWithAFirstCommit();
        try {
            assertThat(System.nanoTime() - start).as("a quiet write commits at once").isLessThan(LONG_SPACING_NANOS / 2);
            CountDownLatch both = new CountDownLatch(2);
            long trickled = System.nanoTime();
            spaced.write(this::fill, both::countDown);
            Thread.sleep(100);
            spaced.write(this::fill, both::countDown);
            assertThat(both.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(batches).as("the two writes after the first commit share one").containsExactly(1, 2);
            assertThat(System.nanoTime() - trickled).as("committed once the spacing was over")
                    .isGreaterThanOrEqualTo(LONG_SPACING_NANOS / 2);
        } finally {
            spaced.stop().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void anActionWakesAWriterWaitingBetweenCommits() throws Exception {
        StoreWriter spaced = spacedWriterWithAFirstCommit();
        try {
            spaced.write(this::fill, null);
            Thread.sleep(100);
            CountDownLatch ran = new CountDownLatch(1);
            long start = System.nanoTime();
            spaced.run(ran::countDown);
            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(System.nanoTime() - start).as("someone waits: no sleep until the spacing is over")
                    .isLessThan(LONG_SPACING_NANOS / 2);
            assertThat(batches).containsExactly(1, 1);
        } finally {
            spaced.stop().get(30, TimeUnit.SECONDS);
        }
    }

    /** A writer {@link #LONG_SPACING_NANOS} between commits, whose first write (a quiet one) is committed. */
    private StoreWriter spacedWriterWithAFirstCommit() throws InterruptedException {
        firstWriteMayEnd.countDown();
        StoreWriter spaced = new StoreWriter(store, new HubMetrics(new SimpleMeterRegistry()), LINGER_NANOS,
                LONG_SPACING_NANOS);
        CountDownLatch first = new CountDownLatch(1);
        spaced.write(this::fill, first::countDown);
        assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
        return spaced;
    }

    /** A conversation's list of writes as the hub keeps it: queued when its first write comes. */
    private final class TestSource implements StoreWriter.Source {
        private final List<Long> fences = new java.util.ArrayList<>();
        final AtomicInteger queued = new AtomicInteger();
        final AtomicInteger committed = new AtomicInteger();

        synchronized void add(long fence) {
            writer.added();
            if (fences.isEmpty()) {
                queued.incrementAndGet();
                writer.write(this);
            }
            fences.add(fence);
        }

        @Override
        public int drainTo(StoreWriter.Sink sink) {
            List<Long> taken;
            synchronized (this) {
                taken = List.copyOf(fences);
                fences.clear();
            }
            for (long fence : taken) {
                fill(sink.batch("fenced", fence));
            }
            sink.afterCommit(() -> committed.addAndGet(taken.size()));
            return taken.size();
        }
    }

    /**
     * Commits a first write, held back in the store until {@code firstWriteMayEnd}, and queues behind
     * it enough writes that the next batch would wait for more.
     */
    private void queueABusyBatchBehindTheFirstCommit() throws InterruptedException {
        writer.write(this::fill, null);
        awaitBatches(1);
        for (int i = 0; i < 64; i++) {
            writer.write(this::fill, null);
        }
    }

    private void fill(StoreBatch b) {
        filled.incrementAndGet();
        b.addConversation(new ConversationRecord("c" + conversations++, "user", 0));
    }

    private void awaitBatches(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (batches.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(batches).hasSize(n);
    }
}
