package dev.switchboard.runtime.openai;

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

/** Where a run's first request to the model is sent from: the starting thread, unless a name lookup could hold it. */
class OpenAiRunStartTest {
    private static AgentRuntime runtime(String baseUrl) {
        Map<String, String> options = Map.of("openai-base-url", baseUrl, "model", "m", "upstream-timeout-seconds", "5");
        Settings settings = key -> Optional.ofNullable(options.get(key));
        return new OpenAiRuntimeProvider().create(settings);
    }

    private static RunRequest request() {
        return new RunRequest("c-1", "run-1", null, Principal.ANONYMOUS,
                List.of(InputMessage.text("m-1", Role.USER, "hello")), List.of(), null, null, null, null);
    }

    @Test
    void aModelAtAnAddressIsAskedFromTheThreadThatStartsTheRun() throws Exception {
        // Nothing listens on port 1: the request is refused, after it was sent from here.
        try (AgentRuntime openai = runtime("http://127.0.0.1:1/v1")) {
            RecordingRunContext ctx = new RecordingRunContext();
            openai.start(request(), ctx);
            assertThat(ctx.historyReader()).as("read before start returned, on this thread")
                    .isSameAs(Thread.currentThread());
            Event end = ctx.awaitEnd(Duration.ofSeconds(10));
            assertThat(end).isInstanceOfSatisfying(Event.RunFailed.class,
                    f -> assertThat(f.code()).isEqualTo(ErrorCode.UPSTREAM_FAILED));
        }
    }

    @Test
    void aModelAtANameIsAskedFromTheRuntimesPool() throws Exception {
        try (AgentRuntime openai = runtime("http://model.invalid:1/v1")) {
            RecordingRunContext ctx = new RecordingRunContext();
            openai.start(request(), ctx);
            // The name is never found (.invalid), or the lookup outlasts the 5 s timeout: the run fails either way.
            Event end = ctx.awaitEnd(Duration.ofSeconds(30));
            assertThat(end).isInstanceOfSatisfying(Event.RunFailed.class,
                    f -> assertThat(f.code()).isEqualTo(ErrorCode.UPSTREAM_FAILED));
            assertThat(ctx.historyReader()).as("the history was read").isNotNull();
            assertThat(ctx.historyReader()).isNotSameAs(Thread.currentThread());
            assertThat(ctx.historyReader().getName()).startsWith("switchboard-openai-");
        }
    }
}
