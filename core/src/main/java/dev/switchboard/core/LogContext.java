package dev.switchboard.core;

import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.internal.HubTraces;
import io.opentelemetry.api.trace.SpanContext;
import org.slf4j.MDC;

/**
 * The conversation and run a thread works for, in SLF4J's MDC ({@value #CONVERSATION_ID},
 * {@value #RUN_ID}, and with traces on the run's {@value #TRACE_ID} and {@value #SPAN_ID}), so that every line it logs meanwhile carries them: the JSON log format writes
 * each MDC key as a field. The hub sets them for its commands, runs and tasks; a runtime sets them
 * on its own threads with {@link #wrap(RunRequest, Runnable)} or {@link #open(RunRequest)}.
 *
 * <p>Set per task, command or run, never per event. A scope puts back what the thread had when it
 * opened, so a pooled thread never carries one conversation's ids into other work.
 */
public final class LogContext {
    /** The MDC key of the conversation's id. */
    public static final String CONVERSATION_ID = "conversation_id";
    /** The MDC key of the run's id. */
    public static final String RUN_ID = "run_id";
    /** The MDC keys of the run's span, while traces are on (docs/observability.md). */
    public static final String TRACE_ID = "trace_id";
    public static final String SPAN_ID = "span_id";

    private LogContext() {
    }

    /** The ids set by {@link #open}, until closed; closing restores what the thread had before. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    /** Sets these ids (a null one is removed) until the scope is closed. */
    public static Scope open(String conversationId, String runId) {
        String conversationBefore = MDC.get(CONVERSATION_ID);
        String runBefore = MDC.get(RUN_ID);
        String traceBefore = MDC.get(TRACE_ID);
        String spanBefore = MDC.get(SPAN_ID);
        SpanContext span = runId == null ? null : HubTraces.live(runId);
        set(CONVERSATION_ID, conversationId);
        set(RUN_ID, runId);
        set(TRACE_ID, span == null ? null : span.getTraceId());
        set(SPAN_ID, span == null ? null : span.getSpanId());
        return () -> {
            set(CONVERSATION_ID, conversationBefore);
            set(RUN_ID, runBefore);
            set(TRACE_ID, traceBefore);
            set(SPAN_ID, spanBefore);
        };
    }

    /** Sets the ids of this run until the scope is closed. */
    public static Scope open(RunRequest run) {
        return open(run.conversationId(), run.runId());
    }

    /** The task, run with these ids set (and what its thread had put back after). */
    public static Runnable wrap(String conversationId, String runId, Runnable task) {
        return () -> {
            try (Scope ids = open(conversationId, runId)) {
                task.run();
            }
        };
    }

    /** The task, run with the ids of this run set. */
    public static Runnable wrap(RunRequest run, Runnable task) {
        return wrap(run.conversationId(), run.runId(), task);
    }

    private static void set(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
