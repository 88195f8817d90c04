package dev.switchboard.core.testing;

import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;

/** A runtime whose every run finishes at once, saying nothing: for tests of what is around runs. */
public final class FinishingRuntime implements AgentRuntime {
    @Override
    public String id() {
        return "idle";
    }

    @Override
    public RunHandle start(RunRequest request, RunContext context) {
        context.finish();
        return () -> { };
    }
}
