package dev.switchboard.runtime.openai;

import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.AgentRuntimeProvider;

/** Provides the {@code openai} runtime ({@code --runtime openai}). */
public final class OpenAiRuntimeProvider implements AgentRuntimeProvider {
    @Override
    public String id() {
        return OpenAiRuntime.ID;
    }

    @Override
    public AgentRuntime create(Settings settings) {
        return new OpenAiRuntime(OpenAiConfig.from(settings));
    }
}
