package dev.switchboard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.FrameWriter;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One sample of every core event, with the ids and sizes the demo agent uses, and for each the
 * events a run has sent before it arrives, so that a session is in the state a real run leaves it
 * in (a message open before its deltas, a tool call open before its arguments).
 */
public final class EventSamples {
    public static final String CONVERSATION = "123e4567-e89b-12d3-a456-426614174000";
    public static final String RUN = "run_5f0c3a9e2b7d4e61a8f09c3b71d2e4a6";
    public static final String MESSAGE = "msg_9b1e4c7a2f3d4b8e9a0c1d2e3f4a5b6c";
    public static final String TOOL_CALL = "call_2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c0b";
    public static final String APPROVAL = "appr_7d9f1b3e5a7c9e1b3d5f7a9c1e3b5d7f";
    public static final long TIMESTAMP = 1_767_225_600_000L;

    private static final String REASONING = "rsn_0a1b2c3d4e5f60718293a4b5c6d7e8f9";

    /** A typical streamed piece of an answer: the demo agent's first chunk. */
    public static final String DELTA = "Based on the food hygiene regulations, ";

    private static final Citation CITATION = new Citation("cite_1", "regulation",
            "Regulation (EC) No 852/2004 on the hygiene of foodstuffs",
            "https://eur-lex.europa.eu/eli/reg/2004/852/oj", 12);
    private static final JsonNode ARGS = Json.object().put("query", "food storage");

    private EventSamples() {
    }

    /** The sample of this kind. */
    public static Event sample(Event.Kind kind) {
        return switch (kind) {
            case RUN_STARTED -> new Event.RunStarted(null);
            case STEP_STARTED -> new Event.StepStarted("thinking");
            case STEP_FINISHED -> new Event.StepFinished("thinking");
            case MESSAGE_STARTED -> new Event.MessageStarted(MESSAGE, Role.ASSISTANT);
            case TEXT_DELTA -> new Event.TextDelta(MESSAGE, DELTA);
            case MESSAGE_COMPLETED -> new Event.MessageCompleted(MESSAGE, DELTA
                    + "restaurants must keep chilled food at 8 °C or below, store raw and ready-to-eat foods apart, "
                    + "and record temperature checks every day.", List.of(CITATION));
            case TOOL_CALL_STARTED -> new Event.ToolCallStarted(TOOL_CALL, "search_regulations", null);
            case TOOL_CALL_ARGS -> new Event.ToolCallArgs(TOOL_CALL, ARGS.toString());
            case TOOL_CALL_COMPLETED -> new Event.ToolCallCompleted(TOOL_CALL, "search_regulations", ARGS);
            case TOOL_RESULT -> new Event.ToolResult(TOOL_CALL, "search_regulations", ARGS, true,
                    "Found 5 relevant regulations", "msg_0a1b2c3d4e5f60718293a4b5c6d7e8f9");
            case APPROVAL_REQUESTED -> new Event.ApprovalRequested(APPROVAL, TOOL_CALL, "generate_inspection_report",
                    "Generates official PDF inspection report that will be stored permanently",
                    Json.object().put("inspection_id", "INS-2024-001"),
                    "User requested to finalize the inspection report", RiskLevel.HIGH);
            case APPROVAL_RESOLVED -> new Event.ApprovalResolved(APPROVAL, true, "Looks good", "anonymous");
            case STATE_SNAPSHOT -> new Event.StateSnapshot(Json.object().put("inspectionId", "INS-2024-001")
                    .put("step", 3));
            case STATE_DELTA -> new Event.StateDelta(Json.MAPPER.createArrayNode().add(Json.object()
                    .put("op", "replace").put("path", "/step").put("value", 4)));
            case CUSTOM -> new Event.Custom("progress", Json.object().put("done", 5));
            case REASONING_STARTED -> new Event.ReasoningStarted(REASONING);
            case REASONING_DELTA -> new Event.ReasoningDelta(REASONING, "They ask about chilled storage.");
            case REASONING_COMPLETED -> new Event.ReasoningCompleted(REASONING, "They ask about chilled storage.");
            case USAGE -> new Event.Usage("demo-model", 120, 48, null, null);
            case RUN_FINISHED -> new Event.RunFinished();
            case RUN_FAILED -> new Event.RunFailed(ErrorCode.INTERNAL, "the demo agent crashed while answering");
        };
    }

    /**
     * What a run has sent when an event of this kind arrives. On an HTTP exchange an approval's
     * decision is the first event of the request that answers it, after the one that asked ended.
     */
    public static List<Event> before(Event.Kind kind, Dialect dialect) {
        if (kind == Event.Kind.APPROVAL_RESOLVED && !dialect.webSocket) {
            return List.of();
        }
        List<Event> out = new ArrayList<>();
        if (kind != Event.Kind.RUN_STARTED) {
            out.add(new Event.RunStarted(null));
        }
        switch (kind) {
            case STEP_FINISHED -> out.add(new Event.StepStarted("thinking"));
            case TEXT_DELTA -> out.add(new Event.MessageStarted(MESSAGE, Role.ASSISTANT));
            case MESSAGE_COMPLETED -> {
                out.add(new Event.MessageStarted(MESSAGE, Role.ASSISTANT));
                out.add(new Event.TextDelta(MESSAGE, DELTA));
            }
            case TOOL_CALL_ARGS, TOOL_CALL_COMPLETED -> out.add(sample(Event.Kind.TOOL_CALL_STARTED));
            case TOOL_RESULT -> {
                out.add(sample(Event.Kind.TOOL_CALL_STARTED));
                out.add(sample(Event.Kind.TOOL_CALL_ARGS));
                out.add(sample(Event.Kind.TOOL_CALL_COMPLETED));
            }
            case APPROVAL_RESOLVED -> out.add(sample(Event.Kind.APPROVAL_REQUESTED));
            case REASONING_DELTA, REASONING_COMPLETED -> out.add(sample(Event.Kind.REASONING_STARTED));
            default -> {
            }
        }
        return out;
    }

    /** The envelope the hub would stamp the {@code seq}-th event of the sample run with. */
    public static Envelope envelope(Event event, long seq) {
        return new Envelope(CONVERSATION, RUN, seq, TIMESTAMP + seq, event);
    }

    /** Encodes what a run has sent before {@code kind} into {@code session}; returns the next seq. */
    public static long prepare(DialectSession session, Dialect dialect, Event.Kind kind, FrameWriter out) {
        long seq = 0;
        try {
            for (Event e : before(kind, dialect)) {
                session.encode(envelope(e, ++seq), out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return seq + 1;
    }
}
