package dev.switchboard.core.internal;

import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.Conversations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The commands of connections: each subscriber's run in order, one at a time, on the hub's
 * workers (which may read the store), and go to runs, approvals or replay.
 */
public final class ConversationService implements Conversations {
    /** Logged under the hub's name, as every part of the hub logs. */
    private static final Logger log = LoggerFactory.getLogger(ConversationHub.class);

    private final Executor workers;
    private final ConversationTable table;
    private final Replay replay;
    private final Runs runs;
    private final Approvals approvals;
    /** Each subscriber's commands run in order, one at a time. */
    private final Map<Subscriber, SerialExecutor> lanes = new ConcurrentHashMap<>();

    public ConversationService(Executor workers, ConversationTable table, Replay replay, Runs runs,
                               Approvals approvals) {
        this.workers = workers;
        this.table = table;
        this.replay = replay;
        this.runs = runs;
        this.approvals = approvals;
    }

    @Override
    public void submit(Command command, Subscriber from) {
        Objects.requireNonNull(from, "from");
        try {
            Runnable task = () -> {
                try {
                    handle(command, from);
                } catch (RuntimeException e) {
                    failed(command, from, e);
                }
            };
            SerialExecutor lane = lanes.computeIfAbsent(from, k -> new SerialExecutor(workers));
            Runnable onWorker = LogContext.wrap(conversationOf(command), runOf(command), task);
            if (command instanceof Command.StartRun start) {
                // Started on this thread when nothing on the way waits; else on a worker, as every command.
                lane.executeHereOr(() -> startHere(start, from), onWorker);
            } else {
                lane.execute(onWorker);
            }
        } catch (RejectedExecutionException stopped) {
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway is shutting down; try again shortly"));
        }
    }

    /** Runs.startRunHere, with the log context of the command; true once it handled the command. */
    private boolean startHere(Command.StartRun start, Subscriber from) {
        try (LogContext.Scope ids = LogContext.open(start.conversationId(), start.runId())) {
            return runs.startRunHere(start, from);
        } catch (RuntimeException e) {
            failed(start, from, e);
            return true;
        }
    }

    private static void failed(Command command, Subscriber from, RuntimeException e) {
        if (e instanceof ClusterLink.ClusterUnavailable) {
            log.warn("command {} failed: {}", command.getClass().getSimpleName(), e.getMessage());
            from.reject(GatewayError.of(ErrorCode.UNAVAILABLE, "the gateway cluster cannot be reached; try again shortly"));
        } else {
            log.error("command {} failed", command.getClass().getSimpleName(), e);
            from.reject(GatewayError.of(ErrorCode.INTERNAL, "the gateway could not handle the request"));
        }
    }

    @Override
    public void disconnected(Subscriber s) {
        Runnable leave = () -> table.leaveAll(s);
        // After the subscriber's queued commands, so none of them joins it to a conversation again.
        SerialExecutor lane = lanes.remove(s);
        if (lane == null) {
            leave.run();
        } else {
            try {
                lane.execute(leave);
            } catch (RejectedExecutionException stopped) {
                leave.run();
            }
        }
    }

    @Override
    public int activeRuns() {
        return runs.activeRuns();
    }

    /** The conversation a command names, for the log context; null for a decision, which names an approval. */
    private static String conversationOf(Command command) {
        if (command instanceof Command.StartRun c) {
            return c.conversationId();
        } else if (command instanceof Command.CancelRun c) {
            return c.conversationId();
        } else if (command instanceof Command.Resume c) {
            return c.conversationId();
        } else if (command instanceof Command.Subscribe c) {
            return c.conversationId();
        }
        return null;
    }

    /** The run a command names, when the client chose its id. */
    private static String runOf(Command command) {
        if (command instanceof Command.StartRun c) {
            return c.runId();
        } else if (command instanceof Command.CancelRun c) {
            return c.runId();
        }
        return null;
    }

    private void handle(Command command, Subscriber from) {
        if (command instanceof Command.StartRun start) {
            runs.startRun(start, from);
        } else if (command instanceof Command.DecideApproval decide) {
            approvals.decide(decide, from);
        } else if (command instanceof Command.CancelRun cancel) {
            runs.cancel(cancel, from);
        } else if (command instanceof Command.Resume resume) {
            runs.resume(resume, from);
        } else if (command instanceof Command.Subscribe sub) {
            // Live joins may name a conversation that does not exist yet: clients pick a new
            // conversation's id and connect before their first message. Its creator decides who
            // stays (see Runs.startRun). Replays, and reattaches to the last run, need a stored conversation.
            boolean live = sub.afterSeq() < 0 && sub.afterSeq() != Command.Subscribe.LAST_RUN;
            Optional<ConversationState> c = table.access(sub.conversationId(), from, live);
            c.ifPresent(conv -> replay.subscribe(conv, from, sub.afterSeq(), sub.catchUp()));
        }
    }
}
