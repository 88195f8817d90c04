package dev.switchboard.runtime.demo;

import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.testing.RecordingRunContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which thread plays a demo run: the one that starts it, then the demo's scheduler. */
class DemoRuntimeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static RunRequest asking(String text) {
        return new RunRequest("c-1", "run-1", null, Principal.ANONYMOUS,
                List.of(InputMessage.text("m-1", Role.USER, text)), List.of(), null, null, null, null);
    }

    @Test
    void aShortRunWithoutPausesIsPlayedWholeBeforeStartReturns() {
        try (DemoRuntime demo = new DemoRuntime(0)) {
            RecordingRunContext ctx = new RecordingRunContext();
            demo.start(asking("benchmark 104"), ctx);

            assertThat(ctx.isDone()).as("ended inside start").isTrue();
            assertThat(ctx.awaitEnd(WAIT)).isInstanceOf(Event.RunFinished.class);
            assertThat(ctx.events()).hasSize(106);
            assertThat(ctx.emitters()).containsOnly(Thread.currentThread());
        }
    }

    @Test
    void aLongRunPlaysItsFirstStepsOnTheStartingThreadAndTheRestOnTheScheduler() {
        int chunks = 1_000;
        try (DemoRuntime demo = new DemoRuntime(0)) {
            RecordingRunContext ctx = new RecordingRunContext();
            demo.start(asking("benchmark " + chunks), ctx);

            assertThat(ctx.awaitEnd(WAIT)).isInstanceOf(Event.RunFinished.class);
            List<Event> events = ctx.events();
            assertThat(events).hasSize(chunks + 2);
            assertThat(events.get(0)).isInstanceOf(Event.MessageStarted.class);
            assertThat(events.subList(1, chunks + 1)).allMatch(e -> e instanceof Event.TextDelta d
                    && d.delta().equals(DemoRuntime.BENCHMARK_CHUNK));
            assertThat(((Event.MessageCompleted) events.get(chunks + 1)).text())
                    .isEqualTo(DemoRuntime.BENCHMARK_CHUNK.repeat(chunks));
            List<Thread> threads = ctx.emitters();
            assertThat(threads.subList(0, DemoRuntime.STEPS_ON_CALLER)).containsOnly(Thread.currentThread());
            assertThat(threads.subList(DemoRuntime.STEPS_ON_CALLER, threads.size()))
                    .allMatch(t -> t.getName().equals("switchboard-demo"));
        }
    }

    @Test
    void benchmarkAnswersOfDifferentLengthsInTurnEachCompleteWithTheirOwnWholeText() {
        try (DemoRuntime demo = new DemoRuntime(0)) {
            for (int chunks : new int[] {3, 5, 3, 1}) {
                RecordingRunContext ctx = new RecordingRunContext();
                demo.start(asking("benchmark " + chunks), ctx);

                assertThat(ctx.awaitEnd(WAIT)).isInstanceOf(Event.RunFinished.class);
                List<Event> events = ctx.events();
                assertThat(events).hasSize(chunks + 2);
                assertThat(events.subList(1, chunks + 1)).allMatch(e -> e instanceof Event.TextDelta d
                        && d.delta().equals(DemoRuntime.BENCHMARK_CHUNK));
                assertThat(((Event.MessageCompleted) events.get(chunks + 1)).text()).as("%d chunks", chunks)
                        .isEqualTo(DemoRuntime.BENCHMARK_CHUNK.repeat(chunks));
            }
        }
    }

    @Test
    void aRunThatPausesGoesOnOnTheSchedulerAfterItsFirstPause() {
        try (DemoRuntime demo = new DemoRuntime(300)) {
            RecordingRunContext ctx = new RecordingRunContext();
            demo.start(asking("what are the rules for chilled food?"), ctx);

            assertThat(ctx.events()).as("played up to the pause of its first step")
                    .containsExactly(new Event.StepStarted("thinking"));
            assertThat(ctx.isDone()).isFalse();
            assertThat(ctx.awaitEnd(WAIT)).isInstanceOf(Event.RunFinished.class);
            List<Thread> threads = ctx.emitters();
            assertThat(threads.get(0)).isEqualTo(Thread.currentThread());
            assertThat(threads.subList(1, threads.size())).allMatch(t -> t.getName().equals("switchboard-demo"));
            assertThat(ctx.text()).startsWith("Based on the food hygiene regulations");
        }
    }

    @Test
    void everyScriptButTheHistorysStartsWithoutWaiting() {
        try (DemoRuntime demo = new DemoRuntime(0)) {
            for (String text : List.of("benchmark 104", "hello", "please search", "report", "crash")) {
                assertThat(demo.startsWithoutWaiting(asking(text).messages())).as(text).isTrue();
            }
            // It reads the conversation's history from the store.
            assertThat(demo.startsWithoutWaiting(asking(" History ").messages())).isFalse();
        }
    }
}
