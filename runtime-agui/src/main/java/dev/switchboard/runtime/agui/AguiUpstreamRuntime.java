package dev.switchboard.runtime.agui;

import dev.switchboard.core.GenAiTelemetry;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Plural;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.Telemetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * An agent that is another AG-UI agent: each run is POSTed upstream as a {@code RunAgentInput} and
 * the agent's event stream is translated back; an interrupt becomes an approval, whose decision
 * resumes the upstream run. Upstream calls are asynchronous; no thread waits on a run.
 */
public final class AguiUpstreamRuntime implements AgentRuntime {
    static final String ID = "agui";
    private static final Logger log = LoggerFactory.getLogger(AguiUpstreamRuntime.class);

    final AguiUpstreamConfig config;
    final UpstreamHttp.Client client;
    /** Where its upstream calls are reported. */
    final GenAiTelemetry telemetry;

    AguiUpstreamRuntime(AguiUpstreamConfig config, Telemetry telemetry) {
        this.config = config;
        this.telemetry = new GenAiTelemetry(telemetry, ID, "ag-ui");
        this.client = new UpstreamHttp.Client("agui", config.timeout());
        log.info("runtime agui: runs go to {} ({}, client tokens {}forwarded)", UpstreamHttp.shown(config.url()),
                Plural.of(config.headers().size(), "extra header"), config.forwardToken() ? "" : "not ");
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public RunHandle start(RunRequest request, RunContext context) {
        AguiUpstreamRun run = new AguiUpstreamRun(this, request, context);
        run.start();
        return run;
    }

    /** True: a run's start hands all its work, the history's read included, to the runtime's pool. */
    @Override
    public boolean startsWithoutWaiting(List<InputMessage> newMessages) {
        return true;
    }

    /** True: every run's input carries the conversation's history. */
    @Override
    public boolean readsHistory() {
        return true;
    }

    @Override
    public void close() {
        client.close();
    }
}
