package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One run of the {@code openai} runtime: turns of streamed model calls, each followed by the server
 * tools it asked for, until the model answers without tools, asks for a frontend tool (which the
 * client runs: the run ends and the next run brings the result), or has used up its tool rounds.
 *
 * <p>Every step is a callback of the previous one, so the run's state is touched by one thread at
 * a time; {@link #cancel()} comes from elsewhere and aborts whatever is in flight.
 */
final class OpenAiRun implements RunHandle {
    private static final Logger log = LoggerFactory.getLogger(OpenAiRun.class);
    /** Largest tool result read; the model's context would not hold more anyway. */
    static final int MAX_TOOL_RESULT_BYTES = 256 * 1024;
    private static final int MAX_ERROR_BODY_BYTES = 16 * 1024;

    private final OpenAiRuntime runtime;
    private final OpenAiConfig config;
    private final RunRequest request;
    private final RunContext ctx;
    private final Map<String, ToolSpec> frontendTools = new LinkedHashMap<>();
    /** The history, the run's new messages, then what the run adds, as the store keeps them. */
    private final List<InputMessage> conversation = new ArrayList<>();
    private int rounds;
    private volatile boolean cancelled;
    /** Stops what is in flight: the model's stream or a tool call. */
    private volatile Runnable abort = () -> { };

    OpenAiRun(OpenAiRuntime runtime, RunRequest request, RunContext ctx) {
        this.runtime = runtime;
        this.config = runtime.config;
        this.request = request;
        this.ctx = ctx;
        for (ToolSpec t : request.tools()) {
            if (!config.tools().containsKey(t.name())) {
                frontendTools.put(t.name(), t);
            }
        }
    }

    void start() {
        runtime.executor.execute(guarded(() -> {
            conversation.addAll(ctx.history());
            conversation.addAll(request.messages());
            turn();
        }));
    }

    @Override
    public void cancel() {
        cancelled = true;
        abort.run();
    }

    private boolean stopped() {
        return cancelled || ctx.isDone();
    }

    /** Runs a step of the run; a bug in it fails the run rather than vanishing in a thread pool. */
    private Runnable guarded(Runnable step) {
        return () -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                log.error("run {} of runtime openai failed", request.runId(), e);
                ctx.fail(ErrorCode.INTERNAL, "the openai runtime failed: " + e.getClass().getSimpleName());
                abort.run();
            }
        };
    }

    /** Ends the run with UPSTREAM_FAILED; the message is for the operator and never holds the API key. */
    private void fail(String message) {
        String safe = config.redact(message);
        if (!stopped()) {
            log.warn("run {} failed: {}", request.runId(), safe);
            ctx.fail(ErrorCode.UPSTREAM_FAILED, safe);
        }
        abort.run();
    }

    // ---- the model ------------------------------------------------------------------------

    private void turn() {
        if (stopped()) {
            return;
        }
        byte[] body = OpenAiMessages.request(config, conversation, frontendTools.values(), request.context());
        HttpRequest.Builder b = HttpRequest.newBuilder(config.endpoint())
                .timeout(config.timeout())
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (!config.apiKey().isEmpty()) {
            b.header("Authorization", "Bearer " + config.apiKey());
        }
        log.debug("run {}: model call {} with {} messages", request.runId(), rounds + 1, conversation.size());
        new ModelStream(new OpenAiTurn(ctx, config.model())).send(b.build());
    }

    /** The model's answer to one request, read as it streams; ends exactly once. */
    private final class ModelStream implements UpstreamHttp.SseListener {
        private final OpenAiTurn turn;
        private final AtomicBoolean over = new AtomicBoolean();
        private volatile long lastActivity = System.nanoTime();
        private volatile boolean answered;
        private volatile UpstreamHttp.SseSubscriber body;
        private volatile CompletableFuture<?> exchange;
        private ScheduledFuture<?> watchdog;

        ModelStream(OpenAiTurn turn) {
            this.turn = turn;
        }

        void send(HttpRequest req) {
            abort = this::abort;
            CompletableFuture<HttpResponse<Void>> f = runtime.http.sendAsync(req, this::bodyFor);
            exchange = f;
            f.whenComplete((r, e) -> {
                if (e != null) {
                    end(describe(e));
                }
            });
            watch(config.timeout().toNanos());
            if (stopped()) {
                abort();
            }
        }

        private HttpResponse.BodySubscriber<Void> bodyFor(HttpResponse.ResponseInfo info) {
            answered = true;
            lastActivity = System.nanoTime();
            int status = info.statusCode();
            if (status / 100 != 2) {
                return HttpResponse.BodySubscribers.mapping(UpstreamHttp.text(MAX_ERROR_BODY_BYTES), text -> {
                    end(httpError(status, text));
                    return null;
                });
            }
            String type = info.headers().firstValue("Content-Type").orElse("");
            if (!type.isEmpty() && !type.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
                return HttpResponse.BodySubscribers.mapping(UpstreamHttp.text(MAX_ERROR_BODY_BYTES), text -> {
                    end("the model server answered POST " + config.endpoint() + " with " + type
                            + " instead of an event stream; it must support \"stream\": true");
                    return null;
                });
            }
            UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(this);
            body = s;
            return s;
        }

        @Override
        public void onEvent(UpstreamHttp.Sse event) {
            lastActivity = System.nanoTime();
            if (over.get()) {
                return;
            }
            try {
                if (event.event().equals("error")) {
                    throw new OpenAiTurn.Refused("the model server reported an error: " + errorText(event.data()));
                }
                if (event.data().equals("[DONE]")) {
                    done();
                    return;
                }
                turn.onData(event.data());
            } catch (OpenAiTurn.Refused r) {
                end(r.getMessage());
            } catch (RuntimeException e) {
                log.error("run {}: reading the model's stream failed", request.runId(), e);
                end("the openai runtime could not read the model's stream: " + e.getClass().getSimpleName());
            }
        }

        @Override
        public void onEnd() {
            // Some servers end the stream after the last chunk without [DONE].
            if (turn.finished()) {
                done();
            } else {
                end("the model server's stream ended before the answer was finished (no finish_reason)");
            }
        }

        @Override
        public void onError(Throwable error) {
            end(describe(error));
        }

        /** The stream ended well: the turn completes and the run goes on. */
        private void done() {
            if (!over.compareAndSet(false, true)) {
                return;
            }
            stopWatching();
            if (stopped()) {
                return;
            }
            guarded(() -> {
                try {
                    turn.complete();
                } catch (OpenAiTurn.Refused r) {
                    fail(r.getMessage());
                    return;
                }
                afterTurn(turn);
            }).run();
        }

        /** The stream failed: the request is dropped and the run fails. */
        private void end(String message) {
            if (!over.compareAndSet(false, true)) {
                return;
            }
            stopWatching();
            dropConnection();
            fail(message);
        }

        private void abort() {
            over.set(true);
            stopWatching();
            dropConnection();
        }

        private void dropConnection() {
            UpstreamHttp.SseSubscriber b = body;
            if (b != null) {
                b.cancel();
            }
            CompletableFuture<?> x = exchange;
            if (x != null) {
                x.cancel(true);
            }
        }

        /** Fails the stream when the server says nothing for the timeout, first for the head, then between events. */
        private synchronized void watch(long delayNanos) {
            if (!over.get()) {
                watchdog = runtime.timer.schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
            }
        }

        private void check() {
            if (over.get()) {
                return;
            }
            long limit = config.timeout().toNanos();
            long idle = System.nanoTime() - lastActivity;
            if (idle < limit) {
                watch(limit - idle);
            } else if (!answered) {
                end("the model server at " + config.endpoint() + " did not answer within "
                        + config.timeout().toSeconds() + " s (--upstream-timeout-seconds)");
            } else {
                end("the model server at " + config.endpoint() + " sent nothing for "
                        + config.timeout().toSeconds() + " s in the middle of its answer (--upstream-timeout-seconds)");
            }
        }

        private synchronized void stopWatching() {
            if (watchdog != null) {
                watchdog.cancel(false);
            }
        }
    }

    private String httpError(int status, String body) {
        String detail = errorText(body);
        String hint = switch (status) {
            case 401, 403 -> " (check --openai-api-key)";
            case 404 -> " (check --openai-base-url and --model)";
            default -> "";
        };
        return "the model server answered HTTP " + status + " to POST " + config.endpoint() + ": " + detail + hint;
    }

    private static String errorText(String body) {
        if (body == null || body.isBlank()) {
            return "(no message)";
        }
        try {
            JsonNode node = Json.parseStrict(body);
            return node.isObject() ? OpenAiTurn.errorMessage(node) : OpenAiTurn.shorten(body);
        } catch (JsonProcessingException e) {
            return OpenAiTurn.shorten(body);
        }
    }

    private String describe(Throwable error) {
        return describe(error, "the model server at " + config.endpoint(), config.timeout().toSeconds());
    }

    /** What went wrong with a request to {@code what}, for the operator. */
    static String describe(Throwable error, String what, long timeoutSeconds) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof HttpConnectTimeoutException) {
            return "could not connect to " + what + " within " + timeoutSeconds + " s";
        }
        if (t instanceof HttpTimeoutException) {
            return what + " did not answer within " + timeoutSeconds + " s (--upstream-timeout-seconds)";
        }
        if (t instanceof ConnectException) {
            return "cannot connect to " + what + ": " + (t.getMessage() == null ? "connection refused" : t.getMessage())
                    + "; is it running, and is the URL right?";
        }
        if (t instanceof CancellationException) {
            return "the request to " + what + " was cancelled";
        }
        if (t instanceof IOException) {
            return "the connection to " + what + " failed: "
                    + (t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
        }
        return "the request to " + what + " failed: " + t;
    }

    // ---- tools ----------------------------------------------------------------------------

    private void afterTurn(OpenAiTurn turn) {
        conversation.addAll(turn.messages());
        List<OpenAiTurn.Call> calls = turn.calls();
        if (calls.isEmpty()) {
            ctx.finish();
            return;
        }
        if (rounds >= config.maxToolRounds()) {
            fail("the model still asked for tools (" + String.join(", ", calls.stream().map(OpenAiTurn.Call::name)
                    .toList()) + ") after " + rounds + " rounds of tool calls, the limit set by --max-tool-rounds; "
                    + "raise it or check what the tools answer");
            return;
        }
        rounds++;
        boolean handsOver = calls.stream().anyMatch(c -> frontendTools.containsKey(c.name()));
        List<OpenAiTurn.Call> serverCalls = calls.stream().filter(c -> !frontendTools.containsKey(c.name())).toList();
        if (serverCalls.isEmpty()) {
            // The client runs its own tools; the next run brings their results.
            ctx.finish();
            return;
        }
        ctx.emit(new Event.StepStarted("executing_tools"));
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (OpenAiTurn.Call call : serverCalls) {
            chain = chain.thenCompose(v -> stopped() ? CompletableFuture.completedFuture(null) : call(call, turn.text()));
        }
        chain.whenComplete((v, e) -> guarded(() -> {
            if (stopped()) {
                return;
            }
            if (e != null) {
                log.error("run {}: a tool round failed", request.runId(), e);
                ctx.fail(ErrorCode.INTERNAL, "the openai runtime failed while running tools");
                return;
            }
            ctx.emit(new Event.StepFinished("executing_tools"));
            if (handsOver) {
                ctx.finish();
            } else {
                turn();
            }
        }).run());
    }

    /** Runs one server tool call, asking for an approval first when its risk calls for one. */
    private CompletableFuture<Void> call(OpenAiTurn.Call call, String reasoning) {
        OpenAiTool tool = config.tools().get(call.name());
        if (tool == null) {
            List<String> names = new ArrayList<>(config.tools().keySet());
            names.addAll(frontendTools.keySet());
            return result(call, false, "there is no tool named " + call.name() + "; the tools are " + names);
        }
        JsonNode args = call.parsedArguments();
        if (args == null) {
            return result(call, false, "the arguments are not a JSON object: "
                    + OpenAiTurn.shorten(call.argumentsText()) + "; call the tool again with a JSON object");
        }
        if (tool.risk().compareTo(config.approvalRisk()) < 0) {
            return invoke(tool, call, args);
        }
        return ctx.requestApproval(new ApprovalRequest(call.id(), call.name(), tool.description(), args, reasoning,
                        tool.risk()))
                .toCompletableFuture()
                .thenCompose(d -> d.approved() ? invoke(tool, call, args) : result(call, false, rejection(d)));
    }

    private static String rejection(ApprovalDecision d) {
        String feedback = d.feedback() == null || d.feedback().isBlank() ? "" : " Their feedback: " + d.feedback().strip();
        return "The person asked to approve this call rejected it, so the tool did not run." + feedback;
    }

    /** Calls the tool's endpoint with the arguments as the JSON body; its body is the result. */
    private CompletableFuture<Void> invoke(OpenAiTool tool, OpenAiTurn.Call call, JsonNode args) {
        HttpRequest.Builder b = HttpRequest.newBuilder(tool.url())
                .timeout(tool.timeout())
                .header("Content-Type", "application/json")
                .method(tool.method(), HttpRequest.BodyPublishers.ofString(args.toString()));
        tool.headers().forEach(b::header);
        CompletableFuture<HttpResponse<String>> f =
                runtime.http.sendAsync(b.build(), info -> UpstreamHttp.text(MAX_TOOL_RESULT_BYTES));
        abort = () -> f.cancel(true);
        if (stopped()) {
            f.cancel(true);
        }
        URI url = tool.url();
        return f.handle((response, error) -> {
            if (error != null) {
                return result(call, false, "the tool " + tool.name() + " failed: "
                        + describe(error, "its endpoint " + url, tool.timeout().toSeconds()));
            }
            if (response.statusCode() / 100 != 2) {
                return result(call, false, "the tool " + tool.name() + " answered HTTP " + response.statusCode() + ": "
                        + OpenAiTurn.shorten(response.body()));
            }
            return result(call, true, response.body());
        }).thenCompose(x -> x);
    }

    /** Reports a tool's outcome and keeps it for the model's next turn. */
    private CompletableFuture<Void> result(OpenAiTurn.Call call, boolean ok, String content) {
        String messageId = Ids.next("msg");
        JsonNode args = call.parsedArguments();
        ctx.emit(new Event.ToolResult(call.id(), call.name(), args, ok, content, messageId));
        conversation.add(new InputMessage(messageId, Role.TOOL, content, List.of(), call.id(), call.name()));
        return CompletableFuture.completedFuture(null);
    }
}
