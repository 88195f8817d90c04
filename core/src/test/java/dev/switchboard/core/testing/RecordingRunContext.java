package dev.switchboard.core.testing;

import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link RunContext} for runtime tests: records events and approvals, and is decided by hand. */
public final class RecordingRunContext implements RunContext {
    /** An approval the runtime asked for, and the decision the test gives it. */
    public record Asked(ApprovalRequest request, CompletableFuture<ApprovalDecision> decision) {
        public void decide(boolean approved, String feedback) {
            decision.complete(new ApprovalDecision("appr_test", approved, feedback, null, Principal.ANONYMOUS));
        }
    }

    private final List<InputMessage> history;
    private final List<Event> events = new ArrayList<>();
    /** The thread that emitted each event, by its place in {@link #events}. */
    private final List<Thread> emitters = new ArrayList<>();
    private final BlockingQueue<Asked> approvals = new LinkedBlockingQueue<>();
    private final CompletableFuture<Event> end = new CompletableFuture<>();
    /** The thread that read the history last; null before any did. */
    private volatile Thread historyReader;
    /** What {@link #home} answers. */
    private volatile Executor home;
    /** What {@link #backedUp} answers. */
    private volatile java.util.function.BooleanSupplier backedUp = () -> false;
    /** Whether {@link #historyInMemory} gives the history (else null, as when only the store holds it). */
    private volatile boolean historyInMemory;

    public RecordingRunContext(List<InputMessage> history) {
        this.history = List.copyOf(history);
    }

    public RecordingRunContext() {
        this(List.of());
    }

    @Override
    public synchronized void emit(Event event) {
        if (event.terminal()) {
            throw new IllegalArgumentException(event.kind() + " is the hub's");
        }
        if (!end.isDone()) {
            events.add(event);
            emitters.add(Thread.currentThread());
        }
    }

    @Override
    public CompletionStage<ApprovalDecision> requestApproval(ApprovalRequest request) {
        Asked asked = new Asked(request, new CompletableFuture<>());
        approvals.add(asked);
        end.whenComplete((e, x) -> asked.decision.completeExceptionally(new CancellationException("the run ended")));
        return asked.decision;
    }

    @Override
    public void finish() {
        end.complete(new Event.RunFinished());
    }

    @Override
    public void fail(ErrorCode code, String message) {
        end.complete(new Event.RunFailed(code, message));
    }

    /** Ends the run as the hub does when it is cancelled. */
    public void cancelled() {
        end.complete(new Event.RunFailed(ErrorCode.CANCELLED, "the run was cancelled"));
    }

    @Override
    public boolean isDone() {
        return end.isDone();
    }

    /** Makes {@link #home} answer {@code executor}, as the connection that asked for the run. */
    public RecordingRunContext home(Executor executor) {
        this.home = executor;
        return this;
    }

    @Override
    public Executor home() {
        return home;
    }

    /** Makes {@link #backedUp} answer what {@code behind} says, as a store that falls behind. */
    public RecordingRunContext backedUp(java.util.function.BooleanSupplier behind) {
        this.backedUp = behind;
        return this;
    }

    @Override
    public boolean backedUp() {
        return backedUp.getAsBoolean();
    }

    /** Makes {@link #historyInMemory} give the history, as for a short conversation the hub created. */
    public RecordingRunContext historyInMemory(boolean held) {
        this.historyInMemory = held;
        return this;
    }

    @Override
    public List<InputMessage> historyInMemory() {
        return historyInMemory ? history : null;
    }

    @Override
    public List<InputMessage> history() {
        historyReader = Thread.currentThread();
        return history;
    }

    /** The thread that read the history last; null before any did. */
    public Thread historyReader() {
        return historyReader;
    }

    /** The events emitted so far. */
    public synchronized List<Event> events() {
        return List.copyOf(events);
    }

    /** The thread that emitted each event so far, in the order of {@link #events()}. */
    public synchronized List<Thread> emitters() {
        return List.copyOf(emitters);
    }

    /** The events of one kind emitted so far. */
    public <E extends Event> List<E> events(Class<E> type) {
        return events().stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** The run's end: RunFinished or RunFailed; fails the test if it does not come in time. */
    public Event awaitEnd(Duration wait) {
        try {
            return end.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError("the run did not end within " + wait + "; events: " + events(), e);
        }
    }

    /** The next approval the runtime asks for; fails the test if none comes in time. */
    public Asked awaitApproval(Duration wait) {
        try {
            Asked a = approvals.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
            if (a == null) {
                throw new AssertionError("no approval was asked for within " + wait + "; events: " + events());
            }
            return a;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** The whole text of the completed messages, in order. */
    public String text() {
        StringBuilder sb = new StringBuilder();
        for (Event.MessageCompleted m : events(Event.MessageCompleted.class)) {
            sb.append(m.text());
        }
        return sb.toString();
    }
}
