package dev.switchboard.core.internal;

import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.RunRequest;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The hub's spans (docs/observability.md): one per run ({@code invoke_agent <runtime>}), a child of
 * the {@code traceparent} the client sent when it asked for the run, and, each linked to the run it
 * concerns rather than held open inside it, one per approval decided and one per resume. With
 * tracing off every span is a no-op.
 */
public final class HubTraces {
    static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
    static final AttributeKey<String> AGENT = AttributeKey.stringKey("gen_ai.agent.name");
    static final AttributeKey<String> CONVERSATION = AttributeKey.stringKey("gen_ai.conversation.id");
    static final AttributeKey<String> DIALECT = AttributeKey.stringKey("switchboard.dialect");
    static final AttributeKey<String> RUN = AttributeKey.stringKey("switchboard.run.id");
    static final AttributeKey<String> USER = AttributeKey.stringKey("enduser.id");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> TOOL = AttributeKey.stringKey("gen_ai.tool.name");
    static final AttributeKey<String> APPROVAL = AttributeKey.stringKey("switchboard.approval.id");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("switchboard.outcome");
    static final AttributeKey<Long> EVENTS = AttributeKey.longKey("switchboard.events");

    private static final TextMapGetter<String> TRACEPARENT = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String carrier) {
            return List.of("traceparent");
        }

        @Override
        public String get(String carrier, String key) {
            return "traceparent".equals(key) ? carrier : null;
        }
    };

    /** The spans of the runs going on, by run id, while traces are on: the logs' trace ids (see LogContext). */
    private static final Map<String, SpanContext> LIVE = new ConcurrentHashMap<>();

    private final Tracer tracer;
    private final boolean recordPrincipal;

    /** {@code recordPrincipal}: whether a run's span names the principal's subject ({@code enduser.id}). */
    public HubTraces(OpenTelemetry otel, boolean recordPrincipal) {
        this.tracer = otel.getTracer(dev.switchboard.core.spi.Telemetry.SCOPE);
        this.recordPrincipal = recordPrincipal;
    }

    /** The trace a subscriber's request belongs to: its {@code traceparent}, else none (a new trace). */
    static Context parentOf(Subscriber s) {
        String traceparent = s == null ? null : s.traceparent();
        if (traceparent == null) {
            return Context.root();
        }
        return W3CTraceContextPropagator.getInstance().extract(Context.root(), traceparent, TRACEPARENT);
    }

    /** Starts a run's span; the caller ends it with the run. */
    Span run(String runtime, RunRequest request, Subscriber from) {
        var b = tracer.spanBuilder("invoke_agent " + runtime).setParent(parentOf(from)).setSpanKind(SpanKind.INTERNAL)
                .setAttribute(OPERATION, "invoke_agent").setAttribute(AGENT, runtime)
                .setAttribute(CONVERSATION, request.conversationId()).setAttribute(RUN, request.runId());
        if (from != null) {
            b.setAttribute(DIALECT, from.dialect());
        }
        if (recordPrincipal && !request.principal().anonymous()) {
            b.setAttribute(USER, request.principal().id());
        }
        Span span = b.startSpan();
        if (span.getSpanContext().isValid()) {
            LIVE.put(request.runId(), span.getSpanContext());
        }
        return span;
    }

    /** The span of run {@code runId} while it goes on and traces are on; null otherwise. */
    public static SpanContext live(String runId) {
        return LIVE.isEmpty() ? null : LIVE.get(runId);
    }

    /** Ends the span of run {@code runId}: {@code error} null when it finished, else its error code. */
    static void ended(Span span, String runId, String error) {
        LIVE.remove(runId);
        if (error != null) {
            span.setAttribute(ERROR_TYPE, error);
            span.setStatus(StatusCode.ERROR);
        }
        span.end();
    }

    /** An approval decided now, asked at {@code askedMillis} (epoch): a span over its wait, linked to its run. */
    void decided(PendingApproval p, boolean approved, Subscriber by) {
        var b = tracer.spanBuilder("approval " + p.record.request().toolName()).setParent(parentOf(by))
                .setSpanKind(SpanKind.INTERNAL).setStartTimestamp(p.askedMillis, TimeUnit.MILLISECONDS)
                .setAttribute(TOOL, p.record.request().toolName())
                .setAttribute(APPROVAL, p.record.approvalId())
                .setAttribute(CONVERSATION, p.conversation.id)
                .setAttribute(OUTCOME, approved ? "approved" : "rejected")
                .setAttribute(DIALECT, by.dialect());
        if (p.run != null && p.run.span.getSpanContext().isValid()) {
            b.addLink(p.run.span.getSpanContext());
        }
        b.startSpan().end();
    }

    /** A resume from a cursor, linked to the run going on in its conversation, if any. */
    void resumed(Subscriber s, ConversationState c, SpanContext run, String outcome, int events) {
        var b = tracer.spanBuilder("resume").setParent(parentOf(s)).setSpanKind(SpanKind.INTERNAL)
                .setAttribute(CONVERSATION, c.id).setAttribute(DIALECT, s.dialect())
                .setAttribute(OUTCOME, outcome).setAttribute(EVENTS, (long) events);
        if (run != null && run.isValid()) {
            b.addLink(run);
        }
        b.startSpan().end();
    }
}
