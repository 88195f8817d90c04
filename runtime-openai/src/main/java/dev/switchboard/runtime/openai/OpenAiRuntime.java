package dev.switchboard.runtime.openai;

import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.http.HttpClient;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An agent backed by an OpenAI-compatible Chat Completions server: each run streams the model's
 * answer and runs the tools it asks for until it answers without tools. Upstream calls are
 * asynchronous; no thread waits on a run.
 */
public final class OpenAiRuntime implements AgentRuntime {
    static final String ID = "openai";
    private static final Logger log = LoggerFactory.getLogger(OpenAiRuntime.class);

    final OpenAiConfig config;
    /** Runs the HTTP client's callbacks and the reads of a run's history; threads are never held by a run. */
    final ExecutorService executor;
    final ScheduledExecutorService timer;
    final HttpClient http;

    OpenAiRuntime(OpenAiConfig config) {
        this.config = config;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "switchboard-openai-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchboard-openai-timer");
            t.setDaemon(true);
            return t;
        });
        // HTTP/1.1: plain-http servers (Ollama, vLLM, llama.cpp) are asked no h2c upgrade.
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.timeout())
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(executor)
                .build();
        log.info("runtime openai: model {} at {}, {} server tools, approvals from risk {}", config.model(),
                config.endpoint(), config.tools().size(), config.approvalRisk().wireName());
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
        timer.shutdownNow();
        executor.shutdownNow();
    }
}
