package dev.switchboard.core;

import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class LogContextTest {

    @Test
    void aScopeSetsTheIdsAndPutsBackWhatTheThreadHadBefore() {
        try (LogContext.Scope outer = LogContext.open("conv-1", null)) {
            assertThat(MDC.get(LogContext.CONVERSATION_ID)).isEqualTo("conv-1");
            assertThat(MDC.get(LogContext.RUN_ID)).isNull();
            try (LogContext.Scope inner = LogContext.open("conv-1", "run-1")) {
                assertThat(MDC.get(LogContext.RUN_ID)).isEqualTo("run-1");
            }
            assertThat(MDC.get(LogContext.CONVERSATION_ID)).isEqualTo("conv-1");
            assertThat(MDC.get(LogContext.RUN_ID)).isNull();
        }
        assertThat(MDC.get(LogContext.CONVERSATION_ID)).isNull();
    }

    @Test
    void aWrappedTaskLeavesNoIdsOnItsPooledThread() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            AtomicReference<String> during = new AtomicReference<>();
            AtomicReference<String> after = new AtomicReference<>("unset");
            pool.submit(LogContext.wrap("conv-2", "run-2", () -> during.set(MDC.get(LogContext.RUN_ID)))).get();
            pool.submit(() -> after.set(MDC.get(LogContext.RUN_ID))).get();
            assertThat(during.get()).isEqualTo("run-2");
            assertThat(after.get()).isNull();
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aTaskThatThrowsStillPutsBackTheIds() {
        Runnable failing = LogContext.wrap("conv-3", "run-3", () -> {
            throw new IllegalStateException("boom");
        });
        try {
            failing.run();
        } catch (IllegalStateException expected) {
            // the scope closed on the way out
        }
        assertThat(MDC.get(LogContext.CONVERSATION_ID)).isNull();
        assertThat(MDC.get(LogContext.RUN_ID)).isNull();
    }
}
