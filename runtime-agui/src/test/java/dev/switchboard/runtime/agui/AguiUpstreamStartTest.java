package dev.switchboard.runtime.agui;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.testing.RecordingRunContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run's start waits on nothing (the hub may call it on an event loop): the history is read and
 * the agent called on the runtime's pool, and a runtime that is closing fails the run at once.
 */
class AguiUpstreamStartTest {
    private static AgentRuntime runtime() {
        // Nothing listens on port 1: the run fails once it calls the agent.
        Map<String, String> options = Map.of("agui-upstream-url", "http://127.0.0.1:1/agent", "upstream-timeout-seconds", "5");
        Settings settings = key -> Optional.ofNullable(options.get(key));
        return new AguiUpstreamRuntimeProvider().create(settings);
    }

    private static RunRequest request() {
        return new RunRequest("thread-1", "run-1", null, Principal.ANONYMOUS,
                List.of(InputMessage.text("u1", Role.USER, "Hi")), List.of(), null, null, null, null);
    }

    @Test
    void theStartReadsTheHistoryOnTheRuntimesPoolNotOnTheCallingThread() {
        try (AgentRuntime agui = runtime()) {
            assertThat(agui.startsWithoutWaiting(request().messages())).isTrue();
            assertThat(agui.readsHistory()).isTrue();
            RecordingRunContext ctx = new RecordingRunContext();
            agui.start(request(), ctx);

            assertThat(ctx.awaitEnd(Duration.ofSeconds(10))).isInstanceOf(Event.RunFailed.class);
            assertThat(ctx.historyReader()).isNotNull().isNotSameAs(Thread.currentThread());
        }
    }

    @Test
    void aRunStartedWhileTheRuntimeClosesFailsAsUnavailable() {
        AgentRuntime agui = runtime();
        agui.close();
        RecordingRunContext ctx = new RecordingRunContext();
        agui.start(request(), ctx);

        assertThat(ctx.awaitEnd(Duration.ofSeconds(5))).isInstanceOfSatisfying(Event.RunFailed.class, f -> {
            assertThat(f.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(f.message()).isEqualTo("the gateway is stopping");
        });
    }
}
