package dev.switchboard.runtime.agui;

import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.http.HttpClient;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An agent that is another AG-UI agent: each run is POSTed upstream as a {@code RunAgentInput} and
 * the agent's event stream is translated back; an interrupt becomes an approval, whose decision
 * resumes the upstream run. Upstream calls are asynchronous; no thread waits on a run.
 */
public final class AguiUpstreamRuntime implements AgentRuntime {
    static final String ID = "agui";
    private static final Logger log = LoggerFactory.getLogger(AguiUpstreamRuntime.class);

    final AguiUpstreamConfig config;
    final ExecutorService executor;
    final ScheduledExecutorService timer;
    final HttpClient http;

    AguiUpstreamRuntime(AguiUpstreamConfig config) {
        this.config = config;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "switchboard-agui-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchboard-agui-timer");
            t.setDaemon(true);
            return t;
        });
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.timeout())
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(executor)
                .build();
        log.info("runtime agui: runs go to {} ({} extra headers, client tokens {}forwarded)", config.url(),
                config.headers().size(), config.forwardToken() ? "" : "not ");
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

    @Override
    public void close() {
        timer.shutdownNow();
        executor.shutdownNow();
    }
}
