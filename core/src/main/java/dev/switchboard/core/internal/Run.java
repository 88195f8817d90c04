package dev.switchboard.core.internal;

import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.DeliveryBurst;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * One active run and its context; the conversation's monitor guards its state. What it logs
 * carries its ids (see {@link LogContext}), whichever thread of the runtime calls it.
 */
final class Run implements RunContext {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);

    private final Runs runs;
    private final Emitter emitter;
    final ConversationState conversation;
    final RunRequest request;
    final Set<String> ownMessages = new HashSet<>();
    final List<PendingApproval> waiting = new ArrayList<>(1);
    RunHandle handle;
    boolean ended;
    /** The hub is stopping the run: the runtime is told first, and nothing it emits or ends counts now. */
    boolean stopping;
    /** The seq of the run's RunStarted; 0 until it is emitted. */
    long startSeq;
    /** The runtime is starting the run: its handle comes when {@code start} returns. */
    boolean starting;
    /** When the run was asked for, for its duration and its first event's delay. */
    private final long startedNanos = System.nanoTime();
    /** Whether the runtime has emitted an event of the run yet. */
    private boolean emitted;
    /** How long a stop waits for the handle of a run the runtime is starting. */
    private static final long HANDLE_WAIT_NANOS = 1_000_000_000L;

    /** The thread of the connection that asked for the run (see {@link RunContext#home}); null: none. */
    private final Executor home;

    /** The run's span, ended with it. */
    final Span span;

    /** A run {@code from} asked for (null: none did, such as a continuation after a restart). */
    Run(Runs runs, ConversationState conversation, RunRequest request, Subscriber from) {
        this.runs = runs;
        this.emitter = runs.emitter;
        this.conversation = conversation;
        this.request = request;
        this.span = runs.traces.run(runs.runtime.id(), request, from);
        this.home = from == null ? null : from.executor();
    }

    /**
     * Starts the run in its runtime, inside the burst its caller opened for the run's start
     * ({@code Runs.startRun}): what the runtime emits before {@code start} returns goes with the
     * {@code RunStarted} before it.
     */
    void launch() {
        try (LogContext.Scope ids = LogContext.open(request)) {
            begin(() -> runs.runtime.start(request, this));
        }
    }

    /** Continues the run in its runtime with these decisions; what it emits meanwhile, in one burst. */
    void continueWith(List<ApprovalRecord> decided) {
        try (LogContext.Scope ids = LogContext.open(request); DeliveryBurst burst = DeliveryBurst.open()) {
            begin(() -> runs.runtime.resume(request, decided, this));
        }
    }

    private void begin(Supplier<RunHandle> starter) {
        RunHandle h;
        synchronized (conversation) {
            starting = true;
        }
        try {
            h = starter.get();
        } catch (RuntimeException e) {
            synchronized (conversation) {
                starting = false;
                conversation.notifyAll();
            }
            log.error("runtime {} failed to start run {}", runs.runtime.id(), request.runId(), e);
            fail(ErrorCode.INTERNAL, "the agent runtime failed to start the run");
            return;
        }
        boolean cancelNow;
        synchronized (conversation) {
            handle = h;
            starting = false;
            conversation.notifyAll();
            // The hub stopped the run while it started; a run the runtime ended itself (it may play
            // a short one inside start) has nothing to cancel.
            cancelNow = stopping;
        }
        if (cancelNow && h != null) {
            h.cancel();
        }
    }

    @Override
    public void emit(Event event) {
        switch (event.kind()) {
            case RUN_STARTED, RUN_FINISHED, RUN_FAILED -> throw new IllegalArgumentException(
                    event.kind() + " is emitted by the hub; call finish() or fail()");
            default -> {
            }
        }
        emitter.awaitRoom();
        synchronized (conversation) {
            if (!ended && !stopping) {
                emitter.emitLocked(this, event, null);
                if (!emitted) {
                    emitted = true;
                    runs.metrics.firstEvent(startedNanos);
                }
            }
        }
    }

    @Override
    public CompletionStage<ApprovalDecision> requestApproval(ApprovalRequest r) {
        PendingApproval p;
        synchronized (conversation) {
            if (ended || stopping) {
                return CompletableFuture.failedFuture(new CancellationException("the run has ended"));
            }
            Event.ApprovalRequested event = new Event.ApprovalRequested(Ids.next("appr"), r.toolCallId(),
                    r.toolName(), r.description(), r.arguments(), r.reasoning(), r.risk());
            ApprovalRecord rec = new ApprovalRecord(conversation.id, request.runId(), conversation.lastSeq + 1,
                    event, ApprovalRecord.Status.PENDING, null, null, null);
            p = new PendingApproval(rec, conversation, this);
            waiting.add(p);
            conversation.pending++;
            runs.table.awaited.put(event.approvalId(), p);
            emitter.emitLocked(this, event, null);
        }
        if (runs.shuttingDown()) {
            suspendIfWaiting();
        }
        return p.decision.copy();
    }

    /** Records a decision once; false if the approval was decided already. */
    boolean resolve(PendingApproval p, ApprovalDecision d) {
        synchronized (conversation) {
            if (!waiting.remove(p)) {
                return false;
            }
            runs.table.awaited.remove(p.record.approvalId());
            conversation.pending--;
            ApprovalRecord decided = p.record.decided(d.approved(), d.feedback(), d.decidedBy().id(),
                    runs.clock.getAsLong());
            emitter.writeApprovalLocked(conversation, decided);
            emitter.emitLocked(this, new Event.ApprovalResolved(p.record.approvalId(), d.approved(), d.feedback(),
                    d.decidedBy().id()), () -> p.decision.complete(d));
        }
        return true;
    }

    @Override
    public void finish() {
        end(new Event.RunFinished(), false, null);
    }

    /** A failure the runtime reports (its agent's, its upstream's, or its own): the operator hears of it. */
    @Override
    public void fail(ErrorCode code, String message) {
        Event.RunFailed failed = new Event.RunFailed(code, message);
        // Opened before the run ends, while its span is live: the line carries the trace's ids too.
        // Written before anyone sees the run end, so a client's error is never ahead of the operator's line.
        try (LogContext.Scope ids = LogContext.open(request)) {
            end(failed, false, () -> log.warn("run {} of conversation {} failed with {}: {}", request.runId(),
                    conversation.id, code.wireCode(), failed.message()));
        }
    }

    /** Stops the run for its client or for shutdown: routine, logged at INFO. */
    void cancel(ErrorCode code, String message) {
        cancelIf(() -> true, code, message);
    }

    /**
     * Ends the run for a shutdown if all it does is wait for a decision (see
     * {@link RunContext#requestApproval}): its approvals stay pending, to be answered after the restart.
     */
    void suspendIfWaiting() {
        cancelIf(() -> !waiting.isEmpty(), ErrorCode.UNAVAILABLE, "the gateway shut down while the run waited for "
                + "an approval; answer it once the gateway is back and the run continues");
    }

    /** Cancels the run if it is still going and, checked under the conversation's lock, {@code condition} holds. */
    private void cancelIf(BooleanSupplier condition, ErrorCode code, String message) {
        RunHandle h;
        synchronized (conversation) {
            if (ended || stopping || !condition.getAsBoolean()) {
                return;
            }
            stopping = true;
            // The runtime is starting the run: wait for its handle, so that it hears of the stop
            // before anyone sees the run end (begin cancels it too when it comes later).
            long deadline = System.nanoTime() + HANDLE_WAIT_NANOS;
            while (starting && handle == null && System.nanoTime() < deadline) {
                try {
                    conversation.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            h = handle;
        }
        try (LogContext.Scope ids = LogContext.open(request)) {
            log.info("run {} of conversation {} stopped with {}: {}", request.runId(), conversation.id,
                    code.wireCode(), message);
            // The runtime hears of it before anyone sees the run end (outside the lock: it may take a while).
            if (h != null) {
                try {
                    h.cancel();
                } catch (RuntimeException e) {
                    log.warn("runtime {} failed to cancel run {}", runs.runtime.id(), request.runId(), e);
                }
            }
            end(new Event.RunFailed(code, message), true, null);
        }
    }

    /**
     * Ends the run with its terminal event; false if it had ended already, or if the runtime
     * ends it ({@code byHub} false) while the hub is stopping it. {@code announce}, if any, runs once the
     * run is known to end here and before its terminal event is emitted.
     */
    private boolean end(Event terminal, boolean byHub, Runnable announce) {
        if (!endLocked(terminal, byHub, announce)) {
            return false;
        }
        if (runs.cluster != null) {
            runs.cluster.release(conversation);
        }
        return true;
    }

    private boolean endLocked(Event terminal, boolean byHub, Runnable announce) {
        synchronized (conversation) {
            if (ended || stopping && !byHub) {
                return false;
            }
            ended = true;
            if (announce != null) {
                announce.run();
            }
            List<PendingApproval> abandoned = new ArrayList<>(waiting);
            waiting.clear();
            // Before the terminal event reaches anyone: whoever sees the run end finds its
            // approvals' decisions ended too. The run has ended, so nothing it emits now counts.
            for (PendingApproval p : abandoned) {
                p.decision.completeExceptionally(new CancellationException("the run ended before a decision"));
            }
            emitter.emitLocked(this, terminal, null);
            conversation.active = null;
            runs.activeRuns.decrementAndGet();
            recordEnd(terminal instanceof Event.RunFailed f ? f.code() : null);
            // A run stopped by shutdown leaves its approvals pending in the store: answered
            // after a restart, they continue the work in a new run.
            boolean keep = terminal instanceof Event.RunFailed f && f.code() == ErrorCode.UNAVAILABLE;
            for (PendingApproval p : abandoned) {
                runs.table.awaited.remove(p.record.approvalId());
                conversation.pending--;
                if (!keep) {
                    ApprovalRecord gone = p.record.cancelled("the run ended before a decision", runs.clock.getAsLong());
                    emitter.writeApprovalLocked(conversation, gone);
                }
            }
        }
        return true;
    }

    /**
     * In a cluster, when this node lost the conversation's write lease: the run stops here without
     * a word (nothing this node emits reaches the cluster now). The node that takes over the
     * conversation fails it, and its approvals stay pending, as after a crash.
     */
    void abandon() {
        RunHandle h;
        List<PendingApproval> abandoned;
        synchronized (conversation) {
            if (ended || stopping) {
                return;
            }
            ended = true;
            stopping = true;
            h = handle;
            abandoned = new ArrayList<>(waiting);
            waiting.clear();
            for (PendingApproval p : abandoned) {
                runs.table.awaited.remove(p.record.approvalId());
                conversation.pending--;
            }
            conversation.active = null;
            runs.activeRuns.decrementAndGet();
            // Failed unavailable by the node that takes the conversation over; counted here, where it ran.
            recordEnd(ErrorCode.UNAVAILABLE);
        }
        for (PendingApproval p : abandoned) {
            p.decision.completeExceptionally(new CancellationException("the run stopped on this node"));
        }
        if (h != null) {
            try (LogContext.Scope ids = LogContext.open(request)) {
                try {
                    h.cancel();
                } catch (RuntimeException e) {
                    log.warn("runtime {} failed to cancel run {}", runs.runtime.id(), request.runId(), e);
                }
            }
        }
    }

    /** Counts the run's end and ends its span: {@code failure} null when it finished. */
    private void recordEnd(ErrorCode failure) {
        runs.metrics.runEnded(failure, startedNanos);
        HubTraces.ended(span, request.runId(), failure == null ? null : failure.wireCode());
    }

    @Override
    public Context traceContext() {
        return Context.root().with(span);
    }

    @Override
    public Executor home() {
        return home;
    }

    @Override
    public boolean backedUp() {
        return emitter.backedUp();
    }

    @Override
    public boolean isDone() {
        synchronized (conversation) {
            return ended || stopping;
        }
    }

    @Override
    public List<InputMessage> history() {
        return withoutOwn(emitter.messagesOf(conversation));
    }

    @Override
    public List<InputMessage> historyInMemory() {
        List<InputMessage> all = emitter.messagesInMemory(conversation);
        return all == null ? null : withoutOwn(all);
    }

    /** The conversation's history messages but this run's own: those it brought and those it added. */
    private List<InputMessage> withoutOwn(List<InputMessage> all) {
        Set<String> own;
        synchronized (conversation) {
            own = Set.copyOf(ownMessages);
        }
        List<InputMessage> out = new ArrayList<>(all.size());
        for (InputMessage m : all) {
            if (!own.contains(m.id())) {
                out.add(m);
            }
        }
        return out;
    }
}
