package dev.switchboard.runtime.demo;

import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.AgentRuntimeProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;

import java.util.List;

/** Provides the {@code demo} runtime ({@code --runtime demo}, the default). */
public final class DemoRuntimeProvider implements AgentRuntimeProvider {
    /** The option of the pause between streamed chunks. */
    static final OptionSpec DELAY = OptionSpec.integer("demo-delay-ms", 30, 0, 60_000,
            "pause between streamed chunks in ms; 0 = none");

    @Override
    public String id() {
        return "demo";
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(DELAY);
    }

    @Override
    public AgentRuntime create(Settings settings) {
        return new DemoRuntime(settings.integer(DELAY.name(), 30));
    }
}
