package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One simulated person of the chaos soak: a conversation of its own in one dialect, runs asked
 * one after another until the soak stops starting them, its connection dropped at random points
 * and resumed from its cursor, now and then a malformed input. It keeps every stored event it was
 * shown (by {@code seq}) so the test can hold it against the store.
 */
abstract class SoakClient implements Runnable {
    final int index;
    final SoakDialect dialect;
    final String conversation;
    final boolean slow;
    final SoakPlan plan;
    final Random random;
    /** The port of the gateway of the current connection (or request): each one goes to a node at random. */
    int port;
    /** The gateway of the connection or request before the current one (0: none). */
    int previousPort;
    /** The port of the gateway that took the last connection or request. */
    private int servedBy;

    /** The seqs this client was shown, each once, in the order it got them. */
    final List<Long> seqs = new ArrayList<>();
    /** The text of each seq that was a text delta. */
    final Map<Long, String> texts = new HashMap<>();
    /** The highest seq shown: the resume cursor. */
    long cursor;
    /** Cursors the gateway answered with the whole conversation (each must name no stored event). */
    final List<Long> resyncedFrom = new ArrayList<>();
    /** Set by a resync: the run the client waits for may have been lost whole with the kill. */
    boolean resynced;
    /** The prompt of the run being asked. */
    String prompt = "";
    /** The kill took one of this client's connections: a run may have been left waiting for approval. */
    boolean outlivedKill;
    volatile String state = "new";
    /** Set when the client gave up waiting for its run: the test shows what the store holds after its cursor. */
    volatile boolean stuck;
    volatile boolean finished;

    /** The client's last steps, for the report of a client that got stuck. */
    private final java.util.ArrayDeque<String> trace = new java.util.ArrayDeque<>();
    /** The same steps further back (the last 4,000), for the report of a seq the client missed. */
    private final java.util.ArrayDeque<String> history = new java.util.ArrayDeque<>();

    /** The cursor this connection resumed from, until its first event arrives. */
    private long resumedFrom = -1;

    SoakClient(int index, SoakDialect dialect, String conversation, boolean slow, SoakPlan plan) {
        this.index = index;
        this.dialect = dialect;
        this.conversation = conversation;
        this.slow = slow;
        this.plan = plan;
        this.random = new Random(plan.seed * 31 + index);
    }

    /** A client of the gateways {@link SoakPlan#nodes} names. */
    static SoakClient of(int index, SoakDialect dialect, String conversation, boolean slow, SoakPlan plan) {
        if (index % plan.stalledEvery == plan.stalledEvery / 2) {
            return new SoakStalledReader(index, conversation, plan);
        }
        return dialect.webSocket ? new SoakWsClient(index, dialect, conversation, slow, plan)
                : new SoakSseClient(index, dialect, conversation, slow, plan);
    }

    /** Picks the gateway of the next connection or request, as a balancer would: any node, at random. */
    final int pickNode() {
        previousPort = port;
        port = plan.node(random);
        return port;
    }

    @Override
    public final void run() {
        try {
            open();
            while (plan.starting()) {
                if (random.nextDouble() < plan.malformedChance) {
                    state = "malformed";
                    malformed(dialect.malformed().get(random.nextInt(dialect.malformed().size())));
                }
                prompt = SoakPlan.prompt(random, dialect.asksApprovals());
                state = "run '" + prompt + "'";
                plan.runsStarted.incrementAndGet();
                run(random.nextDouble() < plan.disconnectChance ? 1 + random.nextInt(12) : -1);
                plan.runsEnded.incrementAndGet();
                state = "thinking";
                Thread.sleep(random.nextInt(300));
            }
        } catch (InterruptedException e) {
            fail("interrupted in state " + state);
        } catch (Throwable t) {
            fail("stopped in state " + state + ": " + t);
        } finally {
            close();
            finished = true;
        }
    }

    /** The first connection, for dialects that hold one. */
    abstract void open() throws InterruptedException;

    /** Asks for one run and follows it to its end; drops the connection after {@code dropAt} events (-1: never). */
    abstract void run(int dropAt) throws Exception;

    /** Sends an input that is not a valid request and expects its error, and nothing else. */
    abstract void malformed(String input) throws Exception;

    abstract void close();

    /** Opens one connection, or throws. */
    interface Connect {
        void attempt() throws Exception;
    }

    /**
     * Connects (a live join first, then resuming from the cursor) to a node picked at random,
     * retrying while the gateway restarts after the kill (or picking another node of a cluster).
     */
    final void connect(Connect connect) throws InterruptedException {
        long deadline = System.nanoTime() + plan.frameWait.toNanos();
        while (true) {
            try {
                pickNode();
                connect.attempt();
                trace("connected to :" + port + " after " + cursor);
                resuming();
                served(cursor > 0);
                return;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                if (!plan.inCrashWindow(port) || System.nanoTime() > deadline) {
                    throw new IllegalStateException("cannot connect to :" + port + ": " + e, e);
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * The gateway on {@link #port} took a connection or request: a resume (from the cursor) is
     * counted, and whether it went to another node than the one before.
     */
    final void served(boolean resume) {
        if (resume) {
            plan.resumes.incrementAndGet();
            if (servedBy != 0 && servedBy != port) {
                plan.resumesOnAnotherNode.incrementAndGet();
            }
        }
        servedBy = port;
    }

    /** The next connection starts: its first event must come after {@code cursor}. */
    final void resuming() {
        resumedFrom = cursor;
    }

    /**
     * One stored event's frame: in order, and never twice. The first frame after a resume may go
     * back only after the kill (the cursor named an event the store lost, README "Crash
     * recovery"), to the start of a run: the client drops what it holds from there on.
     */
    final void record(long seq, JsonNode frame) {
        plan.framesReceived.incrementAndGet();
        String text = dialect.deltaText(frame);
        if (resumedFrom > 0 && seq < resumedFrom && plan.wasKilled()) {
            trace("resync from " + seq + " after cursor " + resumedFrom);
            plan.resyncs.incrementAndGet();
            resyncedFrom.add(resumedFrom);
            // Like a person whose screen starts over: what it asked may be answered, still running, or lost.
            outlivedKill = true;
            resynced = true;
            seqs.removeIf(s -> s >= seq);
            texts.keySet().removeIf(s -> s >= seq);
            cursor = seqs.isEmpty() ? 0 : seqs.get(seqs.size() - 1);
        }
        if (seq < cursor) {
            fail("seq " + seq + " after " + cursor + ": out of order; " + traced());
        } else if (seq == cursor && resumedFrom == cursor) {
            fail("seq " + seq + " again after resuming from it: a duplicate");
        } else if (seq == cursor && text != null && texts.containsKey(seq)) {
            fail("the text delta of seq " + seq + " twice");
        } else if (seq > cursor) {
            seqs.add(seq);
            cursor = seq;
        }
        if (text != null && seq == cursor) {
            texts.put(seq, text);
        }
        resumedFrom = -1;
    }

    /** A run can't start because one is active or waits for approval: a state VoiceAssist can't see. */
    static boolean isBusy(JsonNode error) {
        String s = error.toString();
        return s.contains("run_in_progress") || s.contains("already active in conversation")
                || s.contains("has a run waiting for approval");
    }

    /**
     * A WebSocket frame without a cursor during a run: true for a busy refusal a person would meet
     * and retry (after a pause; the caller asks again), a failure for any other error, and
     * nothing for the leading frames of an event (its last carries the cursor) or VoiceAssist's
     * connected.
     */
    final boolean retryAfter(JsonNode frame) throws InterruptedException {
        if (dialect.isConnectionError(frame) && isBusy(frame) && busyExpected()) {
            plan.busyRetries.incrementAndGet();
            Thread.sleep(300);
            return true;
        }
        if (dialect.isConnectionError(frame)) {
            fail("an error unasked for in " + state + ": " + frame + "; " + traced());
        }
        return false;
    }

    /**
     * Whether a busy answer is one a person of this dialect would meet and retry: VoiceAssist shows
     * no run boundaries; after the kill, the operator's answer to an approval the kill left pending
     * starts a run in the conversation that its client did not ask for (and, since events reach
     * clients before they are stored, may do so while the client goes on asking).
     */
    final boolean busyExpected() {
        return dialect == SoakDialect.VOICE || outlivedKill || plan.wasKilled() && dialect.asksApprovals()
                // The last run may have been the killed node's: until a node takes its lease over,
                // the cluster holds that run active, ended or not (README "Cluster"). It was if the
                // killed node served the client last, or took its last request and died answering it
                // (a busy answer elsewhere since changes neither).
                || plan.inClusterCrashWindow(previousPort) || plan.inClusterCrashWindow(servedBy);
    }

    /** Notes a step (ms since the soak began), keeping the last 24. */
    final synchronized void trace(String what) {
        String step = (System.nanoTime() - plan.startNanos) / 1_000_000 + "ms " + what;
        if (trace.size() == 24) {
            trace.removeFirst();
        }
        trace.addLast(step);
        if (history.size() == 4_000) {
            history.removeFirst();
        }
        history.addLast(step);
    }

    /**
     * The steps around the first event shown after {@code seq} (an event step reads
     * {@code "<ms>ms <seq> <type>"}): the 30 before it and the 5 after, or the last 24 steps; after
     * the kill, then every step from a second before it ({@link #traced}), since an event shown
     * before the kill may be missed for what the client did after it (a resync drops it).
     */
    final synchronized String tracedAround(long seq) {
        List<String> steps = new ArrayList<>(history);
        for (int i = 0; i < steps.size(); i++) {
            String[] parts = steps.get(i).split(" ", 3);
            if (parts.length == 3 && parts[1].matches("\\d+") && Long.parseLong(parts[1]) > seq) {
                String around = String.join(" | ", steps.subList(Math.max(0, i - 30), Math.min(steps.size(), i + 6)));
                return plan.killedAtMillis() < 0 ? around : around + " || " + traced();
            }
        }
        return traced();
    }

    /**
     * The client's last steps: before the kill, the last 24; after it, every step from a second
     * before the kill, which is what a failure across the kill needs. Of more than 700 it shows
     * the first 600 (the kill, the reconnection and what the restarted gateway sent first) and
     * the last 100.
     */
    final synchronized String traced() {
        long killedAt = plan.killedAtMillis();
        if (killedAt < 0) {
            return String.join(" | ", trace);
        }
        List<String> since = new ArrayList<>();
        for (String step : history) {
            if (Long.parseLong(step.substring(0, step.indexOf("ms "))) >= killedAt - 1_000) {
                since.add(step);
            }
        }
        String shown = since.size() <= 700 ? String.join(" | ", since)
                : String.join(" | ", since.subList(0, 600)) + " | (" + (since.size() - 700) + " steps) | "
                        + String.join(" | ", since.subList(since.size() - 100, since.size()));
        return "kill at " + killedAt + "ms | " + shown;
    }

    final void fail(String what) {
        plan.fail("client " + index + " (" + dialect + ", " + conversation + (slow ? ", slow" : "") + "): " + what);
    }

    /** How a connection ended that the client did not end. */
    enum Loss {
        /** The gateway said the client was too slow: WebSocket close 1013. */
        TOO_SLOW,
        /** It ended with no reason given: a slow reader's forced close, or an SSE stream that stopped. */
        UNEXPLAINED,
        /** An error the client met (refused, reset, a failed write). */
        ERROR
    }

    /**
     * A lost connection (to the gateway on {@link #port}): the kill's, the gateway's cut-off of a
     * reader that fell behind, or a failure. An SSE stream that just stops is counted, and the
     * test holds the count against the cut-offs the gateway logged.
     */
    final void lost(String how, Loss loss) {
        if (plan.inCrashWindow(port)) {
            if (!outlivedKill) {
                plan.crashDrops.incrementAndGet();
            }
            outlivedKill = true;
        } else if (loss == Loss.TOO_SLOW || loss == Loss.UNEXPLAINED && slow) {
            plan.slowCutoffs.incrementAndGet();
        } else if (loss == Loss.UNEXPLAINED && !dialect.webSocket) {
            plan.streamsEnded.incrementAndGet();
        } else {
            fail("connection to :" + port + " lost in state " + state + " (not the kill's, not a cut-off): " + how + "; "
                    + traced());
        }
    }

    final void pause(int maxMillis) throws InterruptedException {
        Thread.sleep(random.nextInt(maxMillis));
    }

    final void readSlowly() throws InterruptedException {
        if (slow) {
            Thread.sleep(15 + random.nextInt(40));
        }
    }
}
