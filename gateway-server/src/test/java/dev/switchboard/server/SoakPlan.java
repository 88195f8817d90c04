package dev.switchboard.server;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The chaos soak's settings, what its clients count, and the failures they find. Settings come
 * from system properties ({@code -Dsoak.clients=...}) so the same test runs short in CI and long
 * by hand.
 */
final class SoakPlan {
    final int clients;
    final Duration duration = Duration.ofSeconds(Integer.getInteger("soak.seconds", 40));
    final long seed = Long.getLong("soak.seed", System.nanoTime());
    /** The dialects the clients take turns in (all unless {@code -Dsoak.dialects=HAI,VOICE}). */
    final List<SoakDialect> dialects = System.getProperty("soak.dialects", "").isBlank()
            ? List.of(SoakDialect.values())
            : java.util.Arrays.stream(System.getProperty("soak.dialects").split(",")).map(String::strip)
                    .map(SoakDialect::valueOf).toList();
    /** Chance that a run's client drops its connection at a random point of it and resumes. */
    final double disconnectChance = 0.3;
    /** Chance that a client sends a malformed frame or body before a run. */
    final double malformedChance = 0.08;
    /** One client in this many reads slowly. */
    final int slowEvery = 7;
    /** One client in this many is a HAI client that stops reading for seconds mid-answer (SoakStalledReader). */
    final int stalledEvery = 40;
    /** The heap the gateway may still hold after the soak, past what it held before. */
    final long heapSlackBytes = Long.getLong("soak.heapSlackMiB", 32) << 20;
    /** The longest a client waits for the next frame of a run before it calls the run stuck. */
    final Duration frameWait = Duration.ofSeconds(60);

    final long startNanos = System.nanoTime();
    /** No client starts a run after this. */
    final long stopStartingNanos = startNanos + duration.toNanos();
    /** From the kill to 15 s after clients are served again (restarted, or by the nodes left): drops here may be the kill's. */
    private final AtomicReference<long[]> crashWindow = new AtomicReference<>(new long[] {Long.MAX_VALUE, Long.MAX_VALUE});
    /** The ports of the gateways a client may connect to: one, or the nodes of a cluster behind a balancer. */
    private volatile List<Integer> nodes = List.of();
    /** The port of the gateway the kill took, once it did. */
    private volatile int killedPort = -1;
    /** In a cluster, when the killed node's write leases have all run out and been taken over. */
    private volatile long killedLeasesEndNanos = Long.MIN_VALUE;

    /** A plan of {@code soak.clients} clients, 240 unless set. */
    SoakPlan() {
        this(240);
    }

    /** A plan of {@code soak.clients} clients, {@code defaultClients} unless set. */
    SoakPlan(int defaultClients) {
        clients = Integer.getInteger("soak.clients", defaultClients);
    }

    // What the clients did.
    final AtomicLong runsStarted = new AtomicLong();
    final AtomicLong runsEnded = new AtomicLong();
    final AtomicLong plannedDisconnects = new AtomicLong();
    final AtomicLong resumes = new AtomicLong();
    /** Resumes that went to another node than the connection before (a cluster's). */
    final AtomicLong resumesOnAnotherNode = new AtomicLong();
    /** Resumes from a cursor the kill lost, answered with the whole conversation again. */
    final AtomicLong resyncs = new AtomicLong();
    /** Events clients were shown before the kill that the store never got: the seqs of the kill's gap. */
    final AtomicLong lostInTheGap = new AtomicLong();
    final AtomicLong crashDrops = new AtomicLong();
    final AtomicLong slowCutoffs = new AtomicLong();
    final AtomicLong streamsEnded = new AtomicLong();
    final AtomicLong malformedSent = new AtomicLong();
    final AtomicLong provokedErrors = new AtomicLong();
    final AtomicLong busyRetries = new AtomicLong();
    final AtomicLong resentRequests = new AtomicLong();
    final AtomicLong framesReceived = new AtomicLong();
    final AtomicLong bytesReceived = new AtomicLong();
    final AtomicLong approvalsAnswered = new AtomicLong();
    final AtomicLong decisionsDeferred = new AtomicLong();
    /** Decisions a cluster node forwarded to the killed node, which never answered: asked again. */
    final AtomicLong decisionsUnanswered = new AtomicLong();
    /** Decisions asked again after a "try again" and answered that the first one stands. */
    final AtomicLong decisionsStoodOnRetry = new AtomicLong();
    final AtomicLong operatorSweeps = new AtomicLong();
    final AtomicLong operatorLongestSweepMs = new AtomicLong();
    final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();

    /** The prompts of the demo runtime the clients ask, with their weights. */
    private static final List<Map.Entry<String, Integer>> PROMPTS = List.of(
            Map.entry("hello there", 30), Map.entry("search the rules", 20), Map.entry("slow please", 6),
            Map.entry("benchmark 400", 14), Map.entry("crash now", 5), Map.entry("broken tool", 5),
            Map.entry("please write the report", 20));

    /** A prompt for one run; approvals only for clients that stay for the decision. */
    static String prompt(Random random, boolean approvals) {
        while (true) {
            int total = PROMPTS.stream().mapToInt(Map.Entry::getValue).sum();
            int pick = random.nextInt(total);
            for (Map.Entry<String, Integer> p : PROMPTS) {
                pick -= p.getValue();
                if (pick < 0) {
                    if (approvals || !p.getKey().contains("report")) {
                        return p.getKey();
                    }
                    break;
                }
            }
        }
    }

    boolean starting() {
        return System.nanoTime() < stopStartingNanos;
    }

    /** When the gateway was killed, in ms since the soak began; -1 before the kill. */
    long killedAtMillis() {
        long at = crashWindow.get()[0];
        return at == Long.MAX_VALUE ? -1 : (at - startNanos) / 1_000_000;
    }

    /** Whether the gateway was killed: from then on a cursor may name an event the store lost. */
    boolean wasKilled() {
        return crashWindow.get()[0] != Long.MAX_VALUE;
    }

    /** The gateways clients connect to, as a balancer would send them: each connection to one at random. */
    void nodes(List<Integer> ports) {
        nodes = List.copyOf(ports);
    }

    /** The port of a gateway for one connection; with one gateway, always its port (and no draw). */
    int node(Random random) {
        List<Integer> n = nodes;
        return n.size() == 1 ? n.get(0) : n.get(random.nextInt(n.size()));
    }

    /** The gateway on {@code port} was killed. */
    void killed(int port) {
        killedPort = port;
        crashWindow.set(new long[] {System.nanoTime(), Long.MAX_VALUE});
    }

    /** Clients are served again after the kill: the gateway restarted, or the other nodes of the cluster took over. */
    void servingAgain() {
        long[] w = crashWindow.get();
        crashWindow.set(new long[] {w[0], System.nanoTime() + Duration.ofSeconds(15).toNanos()});
    }

    /** The killed node was a cluster's: its write leases run out within {@code lease} of the kill. */
    void leasesOfTheKilledEndWithin(Duration lease) {
        killedLeasesEndNanos = crashWindow.get()[0] + lease.toNanos();
    }

    /** Whether the killed cluster node may still be named the writer of a conversation (its lease held). */
    boolean killedNodeMayHoldLeases() {
        return wasKilled() && System.nanoTime() <= killedLeasesEndNanos;
    }

    /**
     * Whether a cluster node was killed since {@code sentNanos}: a request sent then may have been
     * passed on to the node killed while it waited for that node's answer.
     */
    boolean clusterNodeKilledSince(long sentNanos) {
        long killedAt = crashWindow.get()[0];
        return killedLeasesEndNanos != Long.MIN_VALUE && killedAt != Long.MAX_VALUE && killedAt >= sentNanos;
    }

    /** Whether it is now between the kill and 15 s after clients were served again. */
    boolean inCrashWindow() {
        long now = System.nanoTime();
        long[] w = crashWindow.get();
        return now >= w[0] && now <= w[1];
    }

    /**
     * Whether a connection to the gateway on {@code port} lost (or refused) now is one the kill took:
     * in the crash window, and to the gateway that was killed (a cluster's other nodes lose no client).
     */
    boolean inCrashWindow(int port) {
        return inCrashWindow() && port == killedPort;
    }

    /** {@link #inCrashWindow(int)}, for a cluster's node (one that is not restarted; others take over). */
    boolean inClusterCrashWindow(int port) {
        return killedLeasesEndNanos != Long.MIN_VALUE && inCrashWindow(port);
    }

    void fail(String what) {
        failures.add(what);
    }

    String figures() {
        return String.join("\n",
                "runs started            " + runsStarted.get(),
                "runs ended (seen)       " + runsEnded.get(),
                "planned disconnects     " + plannedDisconnects.get(),
                "resumes with a cursor   " + resumes.get() + (resumesOnAnotherNode.get() > 0
                        ? " (" + resumesOnAnotherNode.get() + " on another node than the connection before)" : ""),
                "resyncs (lost cursor)   " + resyncs.get(),
                "events seen, lost by the kill " + lostInTheGap.get() + " (in the seq gap it left; never resent)",
                "clients hit by the kill " + crashDrops.get(),
                "readers cut off         " + slowCutoffs.get() + " WebSockets and slow readers, " + streamsEnded.get()
                        + " SSE streams (the outbound bound; they resumed)",
                "malformed inputs sent   " + malformedSent.get(),
                "their errors received   " + provokedErrors.get(),
                "busy retries            " + busyRetries.get(),
                "requests sent again     " + resentRequests.get() + " (lost with a connection the kill took, or refused as busy on one the client dropped)",
                "approvals answered (A2H) " + approvalsAnswered.get() + " (" + decisionsDeferred.get()
                        + " deferred: the run the kill ended must wait for the one now active; "
                        + (decisionsUnanswered.get() == 0 ? "" : decisionsUnanswered.get()
                                + " forwarded to the killed node, unanswered, asked again; ")
                        + (decisionsStoodOnRetry.get() == 0 ? "" : decisionsStoodOnRetry.get()
                                + " of those found taken when asked again; ")
                        + operatorSweeps.get() + " sweeps, the longest " + operatorLongestSweepMs.get() + " ms)",
                "frames/events received  " + framesReceived.get(),
                "bytes received          " + bytesReceived.get(),
                "failures                " + failures.size());
    }
}
