package dev.switchboard.adapter.agui;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.HttpExchange;

import java.io.IOException;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * One {@code POST /agui} request of the official AG-UI 1.0 transport: a {@code RunAgentInput} body
 * answered by one run's events as server-sent events, in the order the official client's verifier
 * ({@code @ag-ui/client} {@code verifyEvents}) accepts.
 *
 * <p>The stream is one AG-UI run under the input's {@code threadId} and {@code runId}, whatever core
 * run id the events carry: a resumed run continues the core run it interrupted under another id.
 */
final class AguiHttpExchange implements HttpExchange {
    private final AguiDecoder decoder;
    private final LongSupplier clock;

    private AguiDecoder.RunInput input;

    /** The core run this stream shows: the input's own, or for a resume the run that continues. */
    private String coreRunId;
    /** The run this stream writes; null until the first frame or a primed event. */
    private AguiRun run;
    /** Whether this stream has written its RUN_STARTED. */
    private boolean started;
    private boolean done;

    AguiHttpExchange(int maxContentChars, LongSupplier clock) {
        this.decoder = new AguiDecoder(maxContentChars, AguiDecoder.Form.OFFICIAL);
        this.clock = clock;
    }

    @Override
    public Decoded decode(String text) {
        AguiDecoder.Decoding decoding = decoder.decodeFrame(text);
        if (decoding.input() != null) {
            input = decoding.input();
            coreRunId = input.resumes() ? null : input.runId();
        }
        return decoding.result();
    }

    @Override
    public boolean streaming() {
        return true;
    }

    @Override
    public boolean done() {
        return done;
    }

    @Override
    public void encode(Envelope envelope, FrameWriter out) throws IOException {
        if (done) {
            return;
        }
        if (coreRunId == null) {
            coreRunId = envelope.runId();
        } else if (!coreRunId.equals(envelope.runId())) {
            // Another run of the thread, such as a pending approval shown again when this
            // request joined it: not part of this stream.
            return;
        }
        Event event = envelope.event();
        long ts = envelope.timestamp();
        if (!started) {
            start(envelope, out);
            started = true;
        }
        switch (event.kind()) {
            case RUN_STARTED, APPROVAL_RESOLVED -> {
            }
            case APPROVAL_REQUESTED -> {
                // A 1.0 run cannot wait on the client: it ends with an interrupt, and the client's
                // next run answers it in resume[]. Later approvals of the same run are not seen here.
                run.closeOpen(ts, out);
                AguiEvents.runInterrupted(out, ts, run.threadId, run.runId, (Event.ApprovalRequested) event,
                        run.usage());
                done = true;
            }
            case RUN_FINISHED -> {
                run.closeOpen(ts, out);
                AguiEvents.runSucceeded(out, ts, run.threadId, run.runId, run.usage());
                done = true;
            }
            case RUN_FAILED -> {
                // The official client refuses any event after RUN_ERROR, so the stream ends here.
                Event.RunFailed failed = (Event.RunFailed) event;
                AguiEvents.runError(out, ts, failed.message(), failed.code().wireCode(), run.usage());
                done = true;
            }
            default -> run.encode(event, ts, out);
        }
    }

    /**
     * A reattached stream still starts with RUN_STARTED and opens what it continues, but does not
     * send again the text and arguments its client was shown before (see {@link AguiRun#prime}).
     */
    @Override
    public void prime(Envelope envelope) {
        if (coreRunId == null) {
            coreRunId = envelope.runId();
        } else if (!coreRunId.equals(envelope.runId())) {
            return;
        }
        if (run == null) {
            run = new AguiRun(envelope.conversationId(), envelope.runId());
        }
        run.prime(envelope.event());
    }

    /**
     * Writes RUN_STARTED, whatever the first event is: the official client refuses a stream that
     * begins otherwise, and a resumed run's first core event is the decision, not a start.
     */
    private void start(Envelope envelope, FrameWriter out) throws IOException {
        long ts = envelope.timestamp();
        if (input == null) {
            if (run == null) {
                run = new AguiRun(envelope.conversationId(), envelope.runId());
            }
            AguiEvents.runStarted(out, ts, run.threadId, run.runId, null);
        } else {
            run = new AguiRun(input.threadId(), input.runId());
            AguiEvents.runStarted(out, ts, run.threadId, run.runId, input.parentRunId());
            if (input.state() != null) {
                AguiEvents.stateSnapshot(out, ts, input.state());
            }
        }
    }

    @Override
    public void encodeError(GatewayError error, FrameWriter out) throws IOException {
        if (done) {
            return;
        }
        if (run != null) {
            AguiEvents.runError(out, clock.getAsLong(), error.message(), error.code().wireCode(), List.of());
        } else {
            AguiEvents.errorBody(out, error);
        }
        done = true;
    }
}
