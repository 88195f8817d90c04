package dev.switchboard.adapter.agui;

import dev.switchboard.core.Command;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.FrameWriter;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * One AG-UI WebSocket connection under the AGORA profile (specs/agui-agora-profile.md): run inputs
 * and approval responses in, AG-UI events out, with the profile's status snapshots at the start and
 * end of each run and its {@code CUSTOM} events for approvals and errors.
 */
final class AguiWsSession implements DialectSession {
    private final AguiDecoder decoder;
    private final LongSupplier clock;
    /** Runs of this connection between their first event and their end, by core run id. */
    private final Map<String, AguiRun> runs = new HashMap<>();
    /** The run {@link #run} found last, the one most events are of; cleared when {@link #runs} changes. */
    private AguiRun lastRun;

    private final List<Command> opening;

    AguiWsSession(int maxContentChars, LongSupplier clock) {
        this(maxContentChars, clock, List.of());
    }

    AguiWsSession(int maxContentChars, LongSupplier clock, List<Command> opening) {
        this.decoder = new AguiDecoder(maxContentChars, AguiDecoder.Form.AGORA);
        this.clock = clock;
        this.opening = opening;
    }

    /** The join the URL asks for ({@code ?threadId=...&last_seq=...}), if any. */
    @Override
    public List<Command> openingCommands() {
        return opening;
    }

    @Override
    public Decoded decode(String text) {
        return decoder.decode(text);
    }

    @Override
    public void encode(Envelope envelope, FrameWriter out) throws IOException {
        Event event = envelope.event();
        long ts = envelope.timestamp();
        switch (event.kind()) {
            case RUN_STARTED -> {
                AguiRun run = new AguiRun(envelope.conversationId(), envelope.runId());
                runs.put(envelope.runId(), run);
                lastRun = run;
                AguiEvents.runStarted(out, ts, run.threadId, run.runId, ((Event.RunStarted) event).parentRunId());
                AguiEvents.statusSnapshot(out, ts, run.threadId, run.runId, "processing");
            }
            case APPROVAL_REQUESTED -> AguiEvents.approvalRequest(out, ts, (Event.ApprovalRequested) event);
            case APPROVAL_RESOLVED -> {
            }
            case RUN_FINISHED -> {
                AguiRun run = end(envelope);
                run.closeOpen(ts, out);
                AguiEvents.statusSnapshot(out, ts, run.threadId, run.runId, "completed");
                AguiEvents.runFinished(out, ts, run.threadId, run.runId, run.usage());
            }
            case RUN_FAILED -> {
                // The profile ends a failed run with RUN_ERROR and then RUN_FINISHED ("Flow 3").
                Event.RunFailed failed = (Event.RunFailed) event;
                AguiRun run = end(envelope);
                run.closeOpen(ts, out);
                AguiEvents.runError(out, ts, failed.message(), failed.code().wireCode(), run.usage());
                AguiEvents.runFinished(out, ts, run.threadId, run.runId, List.of());
            }
            default -> run(envelope).encode(event, ts, out);
        }
    }

    @Override
    public void encodeError(GatewayError error, FrameWriter out) throws IOException {
        AguiEvents.agoraError(out, clock.getAsLong(), error);
    }

    /** The run this event belongs to; a run this connection joined midway is met here first. */
    private AguiRun run(Envelope envelope) {
        AguiRun run = lastRun;
        if (run != null && Objects.equals(run.runId, envelope.runId())) {
            return run;
        }
        run = runs.get(envelope.runId());
        if (run == null) {
            run = new AguiRun(envelope.conversationId(), envelope.runId());
            runs.put(envelope.runId(), run);
        }
        lastRun = run;
        return run;
    }

    private AguiRun end(Envelope envelope) {
        lastRun = null;
        AguiRun run = runs.remove(envelope.runId());
        return run != null ? run : new AguiRun(envelope.conversationId(), envelope.runId());
    }
}
