package dev.switchboard.runtime.agui;

import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.AgentRuntimeProvider;

/** Provides the {@code agui} runtime ({@code --runtime agui}). */
public final class AguiUpstreamRuntimeProvider implements AgentRuntimeProvider {
    @Override
    public String id() {
        return AguiUpstreamRuntime.ID;
    }

    @Override
    public AgentRuntime create(Settings settings) {
        return new AguiUpstreamRuntime(AguiUpstreamConfig.from(settings));
    }
}
