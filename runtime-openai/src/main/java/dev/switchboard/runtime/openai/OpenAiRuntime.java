package dev.switchboard.runtime.openai;

import dev.switchboard.core.GenAiTelemetry;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Plural;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.Telemetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * An agent backed by an OpenAI-compatible Chat Completions server: each run streams the model's
 * answer and runs the tools it asks for until it answers without tools. Upstream calls are
 * asynchronous; no thread waits on a run.
 */
public final class OpenAiRuntime implements AgentRuntime {
    static final String ID = "openai";
    private static final Logger log = LoggerFactory.getLogger(OpenAiRuntime.class);

    final OpenAiConfig config;
    final UpstreamHttp.Client client;
    /** Where its model and tool calls are reported. */
    final GenAiTelemetry telemetry;
    /** The model's connections, read on event loops (tool calls go through {@link #client}). */
    final LoopUpstream upstream;

    OpenAiRuntime(OpenAiConfig config, Telemetry telemetry) {
        this.config = config;
        this.telemetry = new GenAiTelemetry(telemetry, ID, "openai");
        this.client = new UpstreamHttp.Client("openai", config.timeout());
        this.upstream = new LoopUpstream("openai", client.executor, config.timeout(),
                "https".equalsIgnoreCase(config.endpoint().getScheme()));
        log.info("runtime openai: model {} at {}, {}, approvals from risk {}", config.model(),
                UpstreamHttp.shown(config.endpoint()), Plural.of(config.tools().size(), "server tool"),
                config.approvalRisk().wireName());
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public RunHandle start(RunRequest request, RunContext context) {
        OpenAiRun run = new OpenAiRun(this, request, context);
        run.start();
        return run;
    }

    /**
     * True: a run's start reads the history from memory when the hub holds it and else hands the
     * store's read to the runtime's pool (see {@link OpenAiRun#start}), builds the request and
     * hands it to an event loop; nothing in it waits.
     */
    @Override
    public boolean startsWithoutWaiting(List<InputMessage> newMessages) {
        return true;
    }

    /** True: every run's request carries the conversation's history. */
    @Override
    public boolean readsHistory() {
        return true;
    }

    /**
     * Continues a run whose approvals were decided after a restart: the decided tools run (or are
     * answered as rejected) and the model goes on from the stored conversation.
     */
    @Override
    public RunHandle resume(RunRequest request, List<ApprovalRecord> decided, RunContext context) {
        OpenAiRun run = new OpenAiRun(this, request, context);
        run.resume(decided);
        return run;
    }

    @Override
    public void close() {
        upstream.close();
        client.close();
    }
}
