package dev.switchboard.runtime.agui;

import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.AgentRuntimeProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.spi.Telemetry;

import java.util.List;

/** Provides the {@code agui} runtime ({@code --runtime agui}). */
public final class AguiUpstreamRuntimeProvider implements AgentRuntimeProvider {
    @Override
    public String id() {
        return AguiUpstreamRuntime.ID;
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(
                OptionSpec.text("agui-upstream-url", "", "URL of the AG-UI agent to POST runs to; required"),
                OptionSpec.list("agui-upstream-header", "header 'Name: value' sent upstream (repeatable)"),
                OptionSpec.bool("agui-forward-token", false, "forward the client's bearer token upstream"),
                UpstreamHttp.TIMEOUT_OPTION);
    }

    @Override
    public AgentRuntime create(Settings settings) {
        return create(settings, Telemetry.none());
    }

    @Override
    public AgentRuntime create(Settings settings, Telemetry telemetry) {
        return new AguiUpstreamRuntime(AguiUpstreamConfig.from(settings), telemetry);
    }
}
