package dev.switchboard.core.internal;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class SerialExecutorTest {
    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private final SerialExecutor lane = new SerialExecutor(pool);
    private final List<String> ran = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    /** Waits until every task queued so far has run. */
    private void settle() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        lane.execute(done::countDown);
        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void anIdleLaneRunsTheTaskOnTheCallingThreadAndNotTheOther() throws Exception {
        Thread caller = Thread.currentThread();
        lane.executeHereOr(() -> {
            ran.add(Thread.currentThread() == caller ? "here on the caller" : "here elsewhere");
            return true;
        }, () -> ran.add("otherwise"));
        assertThat(ran).containsExactly("here on the caller");
        settle();
        assertThat(ran).containsExactly("here on the caller");
    }

    @Test
    void whatDeclinesRunsTheOtherTaskBeforeLaterOnes() throws Exception {
        Thread caller = Thread.currentThread();
        lane.executeHereOr(() -> false, () -> ran.add(Thread.currentThread() == caller ? "caller" : "worker"));
        lane.execute(() -> ran.add("later"));
        settle();
        assertThat(ran).containsExactly("worker", "later");
    }

    @Test
    void tasksSubmittedWhileItRunsHereWaitForIt() throws Exception {
        lane.executeHereOr(() -> {
            lane.execute(() -> ran.add("submitted meanwhile"));
            ran.add("here");
            return true;
        }, () -> ran.add("otherwise"));
        settle();
        assertThat(ran).containsExactly("here", "submitted meanwhile");
    }

    @Test
    void aBusyLaneQueuesTheOtherTaskBehindWhatRunsAndNeverRunsHere() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        lane.execute(() -> {
            started.countDown();
            try {
                release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ran.add("first");
        });
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        lane.executeHereOr(() -> ran.add("here"), () -> ran.add("otherwise"));
        release.countDown();
        settle();
        assertThat(ran).containsExactly("first", "otherwise");
    }
}
