package dev.switchboard.core;

import dev.switchboard.core.internal.HubMetrics;
import dev.switchboard.core.spi.Telemetry;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;

import java.net.URI;
import java.net.http.HttpRequest;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a runtime reports of its model calls, tool calls and upstream calls, with the names of the
 * OpenTelemetry GenAI semantic conventions (the version docs/observability.md pins): a span per call,
 * a child of the run's, and the {@code gen_ai.client.*} and {@code gen_ai.execute_tool.*} meters.
 * Metric tags hold only what the operator configured (the provider, the model asked for, a server
 * tool's name) or a fixed outcome, so their number stays bounded.
 */
public final class GenAiTelemetry {
    private static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
    private static final AttributeKey<String> PROVIDER = AttributeKey.stringKey("gen_ai.provider.name");
    private static final AttributeKey<String> REQUEST_MODEL = AttributeKey.stringKey("gen_ai.request.model");
    private static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");
    private static final AttributeKey<Long> INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
    private static final AttributeKey<Long> OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
    private static final AttributeKey<Double> FIRST_CHUNK = AttributeKey.doubleKey("gen_ai.response.time_to_first_chunk");
    private static final AttributeKey<String> INPUT_MESSAGES = AttributeKey.stringKey("gen_ai.input.messages");
    private static final AttributeKey<String> OUTPUT_MESSAGES = AttributeKey.stringKey("gen_ai.output.messages");
    private static final AttributeKey<String> TOOL_NAME = AttributeKey.stringKey("gen_ai.tool.name");
    private static final AttributeKey<String> TOOL_CALL_ID = AttributeKey.stringKey("gen_ai.tool.call.id");
    private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    private static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    private static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
    private static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.request.method");
    private static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
    /** The token histogram's buckets, as the conventions ask. */
    private static final double[] TOKEN_BUCKETS = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
            4194304, 16777216, 67108864};

    private final Telemetry telemetry;
    private final Tracer tracer;
    private final String provider;
    private final String runtime;

    /** For a runtime ({@code runtime}, its id) whose upstream is {@code provider} ({@code openai}, {@code ag-ui}). */
    public GenAiTelemetry(Telemetry telemetry, String runtime, String provider) {
        this.telemetry = telemetry;
        this.tracer = telemetry.tracer();
        this.provider = provider;
        this.runtime = runtime;
    }

    /** Whether prompts and completions may be recorded in spans ({@code --otel-capture-content}). */
    public boolean captureContent() {
        return telemetry.captureContent();
    }

    /** Adds {@code traceparent} (and {@code tracestate}) of {@code context} to a request upstream. */
    public static void inject(Context context, HttpRequest.Builder request) {
        W3CTraceContextPropagator.getInstance().inject(context, request, (b, k, v) -> b.header(k, v));
    }

    /** Adds {@code context} as W3C trace headers to a request's headers, through {@code header}. */
    public static void inject(Context context, java.util.function.BiConsumer<String, String> header) {
        W3CTraceContextPropagator.getInstance().inject(context, header, (h, k, v) -> h.accept(k, v));
    }

    /** Starts a model call ({@code chat <model>}) to {@code endpoint}, a child of {@code run}. */
    public ModelCall chat(Context run, String model, URI endpoint) {
        Span span = tracer.spanBuilder("chat " + model).setParent(run).setSpanKind(SpanKind.CLIENT)
                .setAttribute(OPERATION, "chat").setAttribute(PROVIDER, provider).setAttribute(REQUEST_MODEL, model)
                .setAttribute(SERVER_ADDRESS, endpoint.getHost())
                .setAttribute(SERVER_PORT, (long) port(endpoint)).startSpan();
        return new ModelCall(span, model);
    }

    /** Starts a server tool's call ({@code execute_tool <name>}), a child of {@code run}. */
    public ToolCall tool(Context run, String name, String callId) {
        Span span = tracer.spanBuilder("execute_tool " + name).setParent(run).setSpanKind(SpanKind.INTERNAL)
                .setAttribute(OPERATION, "execute_tool").setAttribute(TOOL_NAME, name)
                .setAttribute(TOOL_CALL_ID, callId).startSpan();
        return new ToolCall(span, name);
    }

    /** Starts a call to the upstream agent ({@code method} to {@code url}), a child of {@code run}. */
    public UpstreamCall upstream(Context run, String method, URI url) {
        Span span = tracer.spanBuilder(method).setParent(run).setSpanKind(SpanKind.CLIENT)
                .setAttribute(HTTP_METHOD, method).setAttribute(SERVER_ADDRESS, url.getHost())
                .setAttribute(SERVER_PORT, (long) port(url)).startSpan();
        return new UpstreamCall(span);
    }

    private static int port(URI uri) {
        return uri.getPort() > 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    private MeterRegistry meters() {
        return telemetry.meters();
    }

    /** One model call: its span, and the client meters recorded when it ends. */
    public final class ModelCall {
        private final Span span;
        private final String model;
        private final long start = System.nanoTime();
        private final AtomicBoolean ended = new AtomicBoolean();
        // Written by the thread reading the stream, read by the one that ends the call.
        private volatile long firstChunk;
        private volatile long inputTokens = -1;
        private volatile long outputTokens = -1;

        private ModelCall(Span span, String model) {
            this.span = span;
            this.model = model;
        }

        /** The trace context of the call, for its {@code traceparent}. */
        public Context context() {
            return Context.root().with(span);
        }

        /** The prompt, when content may be recorded: {@code messages} as the request carried them. */
        public void input(String messages) {
            if (captureContent()) {
                span.setAttribute(INPUT_MESSAGES, messages);
            }
        }

        /** A chunk of the answer arrived; the first one counts. */
        public void chunk() {
            if (firstChunk == 0) {
                firstChunk = System.nanoTime();
            }
        }

        public void responseModel(String name) {
            if (name != null) {
                span.setAttribute(RESPONSE_MODEL, name);
            }
        }

        public void usage(long input, long output) {
            inputTokens = input;
            outputTokens = output;
        }

        /**
         * Ends the call, once (later calls are ignored): {@code error} null when it answered, else its
         * error's type; {@code output} its text.
         */
        public void end(String error, String output) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            long end = System.nanoTime();
            String errorType = error == null ? "none" : error;
            Timer.builder("gen_ai.client.operation.duration").description("GenAI operation duration")
                    .tags("gen_ai.operation.name", "chat", "gen_ai.provider.name", provider,
                            "gen_ai.request.model", model, "error.type", errorType)
                    .serviceLevelObjectives(HubMetrics.SECONDS).register(meters())
                    .record(end - start, TimeUnit.NANOSECONDS);
            if (firstChunk > 0) {
                Timer.builder("gen_ai.client.operation.time_to_first_chunk")
                        .description("time from the request to the first chunk of the answer")
                        .tags("gen_ai.operation.name", "chat", "gen_ai.provider.name", provider,
                                "gen_ai.request.model", model)
                        .serviceLevelObjectives(HubMetrics.SECONDS).register(meters())
                        .record(firstChunk - start, TimeUnit.NANOSECONDS);
                span.setAttribute(FIRST_CHUNK, (firstChunk - start) / 1e9);
            }
            if (inputTokens >= 0) {
                tokens("input").record(inputTokens);
                span.setAttribute(INPUT_TOKENS, inputTokens);
            }
            if (outputTokens >= 0) {
                tokens("output").record(outputTokens);
                span.setAttribute(OUTPUT_TOKENS, outputTokens);
            }
            if (output != null && captureContent()) {
                span.setAttribute(OUTPUT_MESSAGES, output);
            }
            if (error != null) {
                span.setAttribute(ERROR_TYPE, error);
                span.setStatus(StatusCode.ERROR);
            }
            span.end();
        }

        private DistributionSummary tokens(String type) {
            return DistributionSummary.builder("gen_ai.client.token.usage")
                    .description("input and output tokens used, as the model server reported them")
                    .tags("gen_ai.operation.name", "chat", "gen_ai.provider.name", provider,
                            "gen_ai.request.model", model, "gen_ai.token.type", type)
                    .serviceLevelObjectives(TOKEN_BUCKETS).register(meters());
        }
    }

    /** One server tool's call. */
    public final class ToolCall {
        private final Span span;
        private final String name;
        private final long start = System.nanoTime();

        private final AtomicBoolean ended = new AtomicBoolean();

        private ToolCall(Span span, String name) {
            this.span = span;
            this.name = name;
        }

        /** The trace context of the call, for its {@code traceparent}. */
        public Context context() {
            return Context.root().with(span);
        }

        /** Ends the call, once: {@code error} null when the tool answered, else its error's type. */
        public void end(String error) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            Timer.builder("gen_ai.execute_tool.duration").description("a server tool's call, from request to answer")
                    .tags("gen_ai.tool.name", name, "error.type", error == null ? "none" : error)
                    .serviceLevelObjectives(HubMetrics.SECONDS).register(meters())
                    .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            if (error != null) {
                span.setAttribute(ERROR_TYPE, error);
                span.setStatus(StatusCode.ERROR);
            }
            span.end();
        }
    }

    /** One call to an upstream agent. */
    public final class UpstreamCall {
        private final Span span;
        private final long start = System.nanoTime();

        private final AtomicBoolean ended = new AtomicBoolean();

        private UpstreamCall(Span span) {
            this.span = span;
        }

        public Context context() {
            return Context.root().with(span);
        }

        /** Ends the call, once: {@code status} the HTTP status (0 when none came), {@code error} null when it succeeded. */
        public void end(int status, String error) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            Timer.builder("switchboard.upstream.duration")
                    .description("calls to an upstream agent, by runtime and outcome")
                    .tags("runtime", runtime, "error.type", error == null ? "none" : error)
                    .serviceLevelObjectives(HubMetrics.SECONDS).register(meters())
                    .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            if (status > 0) {
                span.setAttribute(HTTP_STATUS, (long) status);
            }
            if (error != null) {
                span.setAttribute(ERROR_TYPE, error);
                span.setStatus(StatusCode.ERROR);
            }
            span.end();
        }
    }
}
