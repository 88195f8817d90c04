package dev.switchboard.runtime.openai;

import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.AgentRuntimeProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;
import dev.switchboard.core.spi.Telemetry;

import java.util.List;

/** Provides the {@code openai} runtime ({@code --runtime openai}). */
public final class OpenAiRuntimeProvider implements AgentRuntimeProvider {
    @Override
    public String id() {
        return OpenAiRuntime.ID;
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(
                OptionSpec.text("openai-base-url", "", "base URL of an OpenAI-compatible API "
                        + "(e.g. http://127.0.0.1:11434/v1); required"),
                OptionSpec.text("openai-api-key", "", "API key")
                        .alsoFromEnv("OPENAI_API_KEY"),
                OptionSpec.text("model", "", "model name; required"),
                OptionSpec.text("system-prompt", "", "system prompt sent first in every turn"),
                OptionSpec.integer("max-tool-rounds", 8, 1, 100, "tool rounds before a run fails"),
                UpstreamHttp.TIMEOUT_OPTION,
                OptionSpec.choice("approval-risk", "high",
                        "server tools at or above this risk need an approval", "low", "medium", "high", "critical"),
                OptionSpec.json("tools", "[]", "server tools, a JSON array of {name, description, parameters, "
                        + "url, method, headers, timeoutSeconds, risk} (usually in the config file)"));
    }

    @Override
    public AgentRuntime create(Settings settings) {
        return create(settings, Telemetry.none());
    }

    @Override
    public AgentRuntime create(Settings settings, Telemetry telemetry) {
        return new OpenAiRuntime(OpenAiConfig.from(settings), telemetry);
    }
}
