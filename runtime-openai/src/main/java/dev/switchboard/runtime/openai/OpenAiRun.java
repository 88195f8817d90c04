package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GenAiTelemetry;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Plural;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

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

    /**
     * Reads the history and asks the model. The history comes from memory when the hub holds it
     * (a short conversation it created), on the calling thread: the hub may call this on the event
     * loop that read the run's request ({@link OpenAiRuntime#startsWithoutWaiting}), and the request
     * then goes out from that loop with no thread between. Else the store is read, on the calling
     * thread when it is a hub worker, on the runtime's pool when it is an event loop. The request
     * itself goes out on the run's event loop ({@link #turn}), and a host name is looked up on the
     * runtime's pool, so nothing here waits on the network.
     */
    void start() {
        List<InputMessage> inMemory = ctx.historyInMemory();
        if (inMemory != null) {
            ask(() -> inMemory).run();
        } else if (ctx.home() instanceof EventExecutor loop && loop.inEventLoop()) {
            try {
                runtime.client.executor.execute(ask(ctx::history));
            } catch (RejectedExecutionException stopping) {
                ctx.fail(ErrorCode.UNAVAILABLE, "the gateway is stopping");
            }
        } else {
            ask(ctx::history).run();
        }
    }

    /** The run's first turn, after the history {@code history} gives. */
    private Runnable ask(Supplier<List<InputMessage>> history) {
        return guarded(() -> {
            conversation.addAll(history.get());
            conversation.addAll(request.messages());
            turn();
        });
    }

    /**
     * Continues, in this new run, a run that waited for these approvals when the gateway stopped: each
     * decided tool runs, or is answered as rejected, then the model goes on. Calls of that round that
     * never ran are answered to the model as unanswered (see {@link OpenAiMessages#chat}).
     */
    void resume(List<ApprovalRecord> decided) {
        runtime.client.executor.execute(guarded(() -> {
            conversation.addAll(ctx.history());
            ctx.emit(new Event.StepStarted("executing_tools"));
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            for (ApprovalRecord a : decided) {
                Event.ApprovalRequested asked = a.request();
                OpenAiTurn.Call call = OpenAiTurn.Call.of(asked.toolCallId(), asked.toolName(), asked.arguments());
                OpenAiTool tool = config.tools().get(asked.toolName());
                chain = chain.thenCompose(v -> stopped() ? CompletableFuture.completedFuture(null)
                        : a.status() == ApprovalRecord.Status.APPROVED && tool != null
                        ? invoke(tool, call, asked.arguments())
                        : result(call, false, tool == null ? "there is no tool named " + asked.toolName() + " any more"
                        : rejection(a.feedback())));
            }
            chain.whenComplete((v, e) -> afterTools(e, false));
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

    /**
     * Runs a step of the run with its ids in the log context; a bug in it fails the run rather
     * than vanishing in a thread pool.
     */
    private Runnable guarded(Runnable step) {
        return LogContext.wrap(request, () -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                log.error("run {} of runtime openai failed", request.runId(), e);
                ctx.fail(ErrorCode.INTERNAL, "the openai runtime failed: " + e.getClass().getSimpleName());
                abort.run();
            }
        });
    }

    /** Ends the run with UPSTREAM_FAILED; the message is for the operator and never holds the API key. */
    private void fail(String message) {
        String safe = config.redact(message);
        if (!stopped()) {
            // The hub logs the failed run with its conversation; the message is all it needs.
            ctx.fail(ErrorCode.UPSTREAM_FAILED, safe);
        }
        abort.run();
    }

    // ---- the model ------------------------------------------------------------------------

    /**
     * Asks the model for the next answer, on the event loop of the connection that asked for the run
     * when it has one ({@link LoopUpstream}): the answer's tokens are read, emitted and written to
     * that client by one thread.
     */
    private void turn() {
        if (stopped()) {
            return;
        }
        byte[] body = OpenAiMessages.request(config, conversation, frontendTools.values(), request.context());
        List<Map.Entry<String, String>> headers = new ArrayList<>(5);
        headers.add(Map.entry("Content-Type", "application/json"));
        headers.add(Map.entry("Accept", "text/event-stream"));
        if (!config.apiKey().isEmpty()) {
            headers.add(Map.entry("Authorization", "Bearer " + config.apiKey()));
        }
        log.debug("run {}: model call {} with {}", request.runId(), rounds + 1,
                Plural.of(conversation.size(), "message"));
        GenAiTelemetry.ModelCall call = runtime.telemetry.chat(ctx.traceContext(), config.model(), config.endpoint());
        GenAiTelemetry.inject(call.context(), (k, v) -> headers.add(Map.entry(k, v)));
        if (runtime.telemetry.captureContent()) {
            call.input(new String(body, StandardCharsets.UTF_8));
        }
        OpenAiTurn turn = new OpenAiTurn(ctx, config.model());
        LoopStream stream = LoopStream.open(runtime.upstream, runtime.upstream.loopFor(ctx.home()), config.endpoint(),
                body, headers, "the model server at " + UpstreamHttp.shown(config.endpoint()), config.timeout(),
                ctx::backedUp, new ModelStream(turn, call));
        abort = () -> {
            stream.cancel();
            call.end("cancelled", null);
        };
        if (stopped()) {
            stream.cancel();
        }
    }

    /** Reads the model's answer to one request as it streams. */
    private final class ModelStream implements LoopStream.Listener {
        private final OpenAiTurn turn;
        private final GenAiTelemetry.ModelCall call;

        ModelStream(OpenAiTurn turn, GenAiTelemetry.ModelCall call) {
            this.turn = turn;
            this.call = call;
        }

        @Override
        public void onEvent(LoopStream stream, UpstreamHttp.SseView event) {
            call.chunk();
            try {
                if (event.event().equals("error")) {
                    throw new OpenAiTurn.Refused("the model server reported an error: "
                            + UpstreamHttp.errorText(event.text()));
                }
                if (event.is("[DONE]")) {
                    done(stream);
                    return;
                }
                turn.onData(event);
            } catch (OpenAiTurn.Refused r) {
                stream.fail(r.getMessage(), 0);
            } catch (RuntimeException e) {
                try (LogContext.Scope ids = LogContext.open(request)) {
                    log.error("run {}: reading the model's stream failed", request.runId(), e);
                }
                stream.fail("the openai runtime could not read the model's stream: " + e.getClass().getSimpleName(), 0);
            }
        }

        @Override
        public void onEnd(LoopStream stream) {
            // Some servers end the stream after the last chunk without [DONE].
            if (turn.finished()) {
                done(stream);
            } else {
                stream.fail("the model server's stream ended before the answer was finished (no finish_reason)", 0);
            }
        }

        @Override
        public void onFailure(String message, int httpStatus) {
            String hint = switch (httpStatus) {
                case 401, 403 -> " (check --openai-api-key)";
                case 404 -> " (check --openai-base-url and --model)";
                default -> "";
            };
            call.end(httpStatus > 0 ? Integer.toString(httpStatus) : "upstream_failed", null);
            fail(message + hint);
        }

        /** The answer is whole: the turn completes and the run goes on. */
        private void done(LoopStream stream) {
            if (!stream.done() || stopped()) {
                return;
            }
            call.responseModel(turn.responseModel());
            long[] usage = turn.usage();
            if (usage != null) {
                call.usage(usage[0], usage[1]);
            }
            try (LogContext.Scope ids = LogContext.open(request)) {
                try {
                    turn.complete();
                } catch (OpenAiTurn.Refused r) {
                    call.end("invalid_response", turn.text());
                    fail(r.getMessage());
                    return;
                }
                call.end(null, turn.text());
                afterTurn(turn);
            }
        }
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
                    .toList()) + ") after " + Plural.of(rounds, "round") + " of tool calls, the limit set by "
                    + "--max-tool-rounds; raise it or check what the tools answer");
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
        chain.whenComplete((v, e) -> afterTools(e, handsOver));
    }

    /** After a round of server tools: the model goes on, or the client runs its own tools first. */
    private void afterTools(Throwable error, boolean handsOver) {
        guarded(() -> {
            if (stopped()) {
                return;
            }
            if (error != null) {
                log.error("run {}: a tool round failed", request.runId(), error);
                ctx.fail(ErrorCode.INTERNAL, "the openai runtime failed while running tools");
                return;
            }
            ctx.emit(new Event.StepFinished("executing_tools"));
            if (handsOver) {
                ctx.finish();
            } else {
                turn();
            }
        }).run();
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
                    + UpstreamHttp.shorten(call.argumentsText()) + "; call the tool again with a JSON object");
        }
        if (tool.risk().compareTo(config.approvalRisk()) < 0) {
            return invoke(tool, call, args);
        }
        return ctx.requestApproval(new ApprovalRequest(call.id(), call.name(), tool.description(), args, reasoning,
                        tool.risk()))
                .toCompletableFuture()
                .thenCompose(d -> d.approved() ? invoke(tool, call, args) : result(call, false, rejection(d.feedback())));
    }

    private static String rejection(String feedback) {
        String said = feedback == null || feedback.isBlank() ? "" : " Their feedback: " + feedback.strip();
        return "The person asked to approve this call rejected it, so the tool did not run." + said;
    }

    /** Calls the tool's endpoint with the arguments as the JSON body; its body is the result. */
    private CompletableFuture<Void> invoke(OpenAiTool tool, OpenAiTurn.Call call, JsonNode args) {
        HttpRequest toolRequest;
        GenAiTelemetry.ToolCall traced = runtime.telemetry.tool(ctx.traceContext(), tool.name(), call.id());
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(tool.url())
                    .timeout(tool.timeout())
                    .header("Content-Type", "application/json")
                    .method(tool.method(), HttpRequest.BodyPublishers.ofString(args.toString()));
            tool.headers().forEach(b::header);
            GenAiTelemetry.inject(traced.context(), b);
            toolRequest = b.build();
        } catch (IllegalArgumentException e) {
            traced.end("invalid_request");
            return result(call, false, "the tool " + tool.name() + " could not be called: " + e.getMessage());
        }
        // This may run on an event loop (after the model's answer): a host name, whose lookup the JDK's
        // client may do on the sending thread, is sent from the runtime's pool.
        AtomicReference<CompletableFuture<?>> exchange = new AtomicReference<>();
        Supplier<CompletableFuture<HttpResponse<String>>> send = () -> {
            if (stopped()) {
                return CompletableFuture.failedFuture(new CancellationException("the run ended"));
            }
            CompletableFuture<HttpResponse<String>> x =
                    runtime.client.http.sendAsync(toolRequest, info -> UpstreamHttp.text(MAX_TOOL_RESULT_BYTES));
            exchange.set(x);
            return x;
        };
        CompletableFuture<HttpResponse<String>> f = UpstreamHttp.needsNoLookup(tool.url()) ? send.get()
                : CompletableFuture.supplyAsync(send, runtime.client.executor).thenCompose(x -> x);
        abort = () -> {
            f.cancel(true);
            CompletableFuture<?> x = exchange.get();
            if (x != null) {
                x.cancel(true);
            }
        };
        if (stopped()) {
            abort.run();
        }
        URI url = tool.url();
        return f.handle((response, error) -> {
            if (error != null) {
                traced.end(error.getClass().getSimpleName());
                return result(call, false, "the tool " + tool.name() + " failed: "
                        + UpstreamHttp.describe(error, "its endpoint " + url, tool.timeout()));
            }
            if (response.statusCode() / 100 != 2) {
                traced.end(Integer.toString(response.statusCode()));
                return result(call, false, "the tool " + tool.name() + " answered HTTP " + response.statusCode() + ": "
                        + UpstreamHttp.shorten(response.body()));
            }
            traced.end(null);
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
