package dev.switchboard.runtime.agui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GenAiTelemetry;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Plural;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import io.opentelemetry.context.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * One run of the {@code agui} runtime: a request upstream whose events are the run's, then, while
 * the upstream run ends with interrupts, an approval per interrupt (asked one after another, so a
 * client that answers one approval at a time, as AG-UI's own transport does, can answer them all)
 * and a new request that resumes it with the decisions.
 *
 * <p>AG-UI has no way to stop an upstream run: cancelling drops the connection, and the upstream
 * agent may go on. A run that ends while it waits for a decision tells the upstream its interrupts
 * are cancelled, so the upstream thread is not left waiting.
 */
final class AguiUpstreamRun implements RunHandle {
    private static final Logger log = LoggerFactory.getLogger(AguiUpstreamRun.class);

    private final AguiUpstreamRuntime runtime;
    private final AguiUpstreamConfig config;
    private final RunRequest request;
    private final RunContext ctx;
    private final AguiUpstreamEvents events;
    private final String upstream;
    private List<InputMessage> history = List.of();
    private volatile boolean cancelled;
    private volatile Runnable abort = () -> { };

    AguiUpstreamRun(AguiUpstreamRuntime runtime, RunRequest request, RunContext ctx) {
        this.runtime = runtime;
        this.config = runtime.config;
        this.request = request;
        this.ctx = ctx;
        this.events = new AguiUpstreamEvents(ctx);
        this.upstream = "the AG-UI agent at " + UpstreamHttp.shown(config.url());
    }

    /** Reads the history and posts the run, on the runtime's pool: the hub may call this on an event loop. */
    void start() {
        try {
            runtime.client.executor.execute(guarded(() -> {
                history = ctx.history();
                post(request.runId(), null);
            }));
        } catch (RejectedExecutionException stopping) {
            ctx.fail(ErrorCode.UNAVAILABLE, "the gateway is stopping");
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        abort.run();
    }

    private boolean stopped() {
        return cancelled || ctx.isDone();
    }

    /**
     * Runs a step of the run with its ids in the log context; a bug in it fails the run rather
     * than vanishing in a thread pool.
     */
    private Runnable guarded(Runnable step) {
        return LogContext.wrap(request, () -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                log.error("run {} of runtime agui failed", request.runId(), e);
                ctx.fail(ErrorCode.INTERNAL, "the agui runtime failed: " + e.getClass().getSimpleName());
                abort.run();
            }
        });
    }

    /**
     * Ends the run with an error; the message is for the operator (and the client) and never holds
     * the token or a header value sent upstream.
     */
    private void fail(ErrorCode code, String message) {
        if (!stopped()) {
            // The hub logs the failed run with its conversation; the message is all it needs.
            ctx.fail(code, config.redact(message, config.forwardToken() ? request.principal().credential() : null));
        }
        abort.run();
    }

    /** The conversation as the upstream should see it: the history, the run's new messages, what the run added. */
    private List<InputMessage> conversation() {
        List<InputMessage> all = new ArrayList<>(history);
        all.addAll(request.messages());
        all.addAll(events.messages());
        return all;
    }

    private HttpRequest request(String runId, ArrayNode resume, Context trace) {
        HttpRequest.Builder b = HttpRequest.newBuilder(config.url())
                .timeout(config.timeout())
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(
                        AguiUpstreamInput.build(request, runId, conversation(), resume)));
        config.headers().forEach(h -> b.setHeader(h.name(), h.value()));
        String token = request.principal().credential();
        if (config.forwardToken() && token != null) {
            b.setHeader("Authorization", "Bearer " + token);
        }
        GenAiTelemetry.inject(trace, b);
        return b.build();
    }

    private void post(String runId, ArrayNode resume) {
        if (stopped()) {
            return;
        }
        log.debug("run {}: POST {} as upstream run {}{}", request.runId(), UpstreamHttp.shown(config.url()), runId,
                resume == null ? "" : " resuming " + Plural.of(resume.size(), "interrupt"));
        GenAiTelemetry.UpstreamCall call = runtime.telemetry.upstream(ctx.traceContext(), "POST", config.url());
        UpstreamHttp.EventStream stream = UpstreamHttp.EventStream.open(runtime.client.http,
                request(runId, resume, call.context()), upstream, config.timeout(), runtime.client.timer, new Reader(call));
        abort = () -> {
            stream.cancel();
            call.end(0, "cancelled");
        };
        if (stopped()) {
            stream.cancel();
        }
    }

    /** Reads one upstream run's event stream. */
    private final class Reader implements UpstreamHttp.EventStream.Listener {
        private final GenAiTelemetry.UpstreamCall call;

        Reader(GenAiTelemetry.UpstreamCall call) {
            this.call = call;
        }

        @Override
        public void onEvent(UpstreamHttp.EventStream stream, UpstreamHttp.Sse sse) {
            AguiUpstreamEvents.Outcome outcome;
            try {
                JsonNode event;
                try {
                    event = Json.parseStrict(sse.data());
                } catch (JsonProcessingException e) {
                    throw new AguiUpstreamEvents.Refused("the AG-UI agent sent an event that is not JSON: "
                            + UpstreamHttp.shorten(sse.data()));
                }
                outcome = events.onEvent(event);
            } catch (AguiUpstreamEvents.Refused r) {
                stream.fail(r.getMessage(), 0);
                return;
            } catch (RuntimeException e) {
                try (LogContext.Scope ids = LogContext.open(request)) {
                    log.error("run {}: reading the AG-UI agent's stream failed", request.runId(), e);
                }
                stream.fail("the agui runtime could not read the agent's stream: " + e.getClass().getSimpleName(), 0);
                return;
            }
            if (outcome != null && stream.done()) {
                call.end(200, outcome instanceof AguiUpstreamEvents.Outcome.Failed ? "run_error" : null);
                try (LogContext.Scope ids = LogContext.open(request)) {
                    ended(outcome);
                }
            }
        }

        @Override
        public void onEnd(UpstreamHttp.EventStream stream) {
            stream.fail(upstream + " ended its stream without RUN_FINISHED or RUN_ERROR", 0);
        }

        @Override
        public void onFailure(String message, int httpStatus) {
            String hint = httpStatus == 401 || httpStatus == 403
                    ? " (check --agui-upstream-header and --agui-forward-token)" : "";
            call.end(httpStatus, httpStatus > 0 ? Integer.toString(httpStatus) : "upstream_failed");
            fail(ErrorCode.UPSTREAM_FAILED, message + hint);
        }
    }

    private void ended(AguiUpstreamEvents.Outcome outcome) {
        if (stopped()) {
            return;
        }
        if (outcome instanceof AguiUpstreamEvents.Outcome.Finished) {
            ctx.finish();
        } else if (outcome instanceof AguiUpstreamEvents.Outcome.Failed failed) {
            fail(ErrorCode.UPSTREAM_FAILED, "the AG-UI agent's run failed: " + failed.message()
                    + (failed.code() == null ? "" : " (" + failed.code() + ")"));
        } else if (outcome instanceof AguiUpstreamEvents.Outcome.Cancelled) {
            fail(ErrorCode.CANCELLED, "the AG-UI agent cancelled the run before it finished");
        } else if (outcome instanceof AguiUpstreamEvents.Outcome.Interrupted interrupted) {
            decide(interrupted.interrupts(), 0, Json.MAPPER.createArrayNode());
        }
    }

    /** Asks for the approval of interrupt {@code next}; once all are decided, resumes the upstream run. */
    private void decide(List<JsonNode> interrupts, int next, ArrayNode resume) {
        if (stopped()) {
            return;
        }
        if (next == interrupts.size()) {
            post(Ids.next("run"), resume);
            return;
        }
        JsonNode interrupt = interrupts.get(next);
        ctx.requestApproval(events.approvalFor(interrupt)).whenComplete((decision, error) -> guarded(() -> {
            if (error != null) {
                cancelUpstream(interrupts);
                return;
            }
            resume.add(resolved(interrupt, decision));
            decide(interrupts, next + 1, resume);
        }).run());
    }

    /**
     * The resume entry of a decided interrupt: the payload its response schema asks for,
     * {@code {approved, feedback}}, over anything else the deciding client sent.
     */
    private static ObjectNode resolved(JsonNode interrupt, ApprovalDecision decision) {
        ObjectNode entry = Json.object().put("interruptId", interrupt.get("id").textValue()).put("status", "resolved");
        ObjectNode payload = decision.payload() != null && decision.payload().isObject()
                ? ((ObjectNode) decision.payload()).deepCopy() : Json.object();
        payload.put("approved", decision.approved());
        if (decision.feedback() != null) {
            payload.put("feedback", decision.feedback());
        } else {
            payload.remove("feedback");
        }
        entry.set("payload", payload);
        return entry;
    }

    /** The run ended while it waited: the upstream hears its interrupts are cancelled; its answer is not read. */
    private void cancelUpstream(List<JsonNode> interrupts) {
        ArrayNode resume = Json.MAPPER.createArrayNode();
        for (JsonNode i : interrupts) {
            resume.addObject().put("interruptId", i.get("id").textValue()).put("status", "cancelled");
        }
        runtime.client.http.sendAsync(request(Ids.next("run"), resume, ctx.traceContext()),
                        HttpResponse.BodyHandlers.discarding())
                .whenComplete((r, e) -> LogContext.wrap(request, () -> log.debug("run {}: cancelled {} upstream: {}",
                        request.runId(), Plural.of(interrupts.size(), "interrupt"),
                        e == null ? "HTTP " + r.statusCode() : e.toString())).run());
    }
}
