package dev.switchboard.server;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.spi.ConversationStore;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The chaos soak's checks of what its clients saw against the store, and of the stored runs
 * against the demo agent's answers: the same for one gateway ({@link ChaosSoakTest}, SQLite) and
 * a cluster ({@link ClusterChaosSoakTest}, PostgreSQL).
 */
final class SoakChecks {
    /** Every message the demo agent can write for the prompts the soak asks (the operator approves). */
    static final Set<String> ANSWERS = Set.of(
            "Based on the food hygiene regulations, restaurants must keep chilled food at 8 °C or below, "
                    + "store raw and ready-to-eat foods apart, and record temperature checks every day.",
            "I found 5 relevant regulations. The most important is Regulation (EC) No 852/2004, "
                    + "which requires hazard analysis and temperature control for every food business.",
            IntStream.rangeClosed(1, 50).mapToObj(i -> "chunk " + i).collect(Collectors.joining(" ")) + ".",
            "token ".repeat(400),
            "token ".repeat(2000),
            "Let me look into that for you",
            "The tool lookup_inspection_records failed (Database connection timeout), "
                    + "so I could not check the inspection records. Please try again later.",
            "The inspection report INS-2024-001 was generated and stored permanently as RPT-INS-2024-001.pdf.");

    private SoakChecks() {
    }

    /** A few runs in three dialects: warms the gateway up, and allocates after a GC. */
    static void traffic(int port) {
        for (int i = 0; i < 5; i++) {
            try (WsClient hai = WsClient.connect(port, "/hai/ws")) {
                hai.ask("warm-" + UUID.randomUUID(), "search the rules").untilCompleted();
            }
            AguiHttp.run(port, AguiHttp.input("warm-" + UUID.randomUUID(), "hello"));
        }
    }

    /**
     * Waits for every client to finish (failing those still busy two minutes after the soak stopped
     * starting runs), then stops the operator and sweeps once more, so runs continued by the last
     * approvals finish before the checks.
     */
    static void awaitTheEnd(SoakPlan plan, List<SoakClient> clients, List<Thread> threads, SoakOperator operator,
                            Thread operatorThread) throws InterruptedException {
        long deadline = plan.stopStartingNanos + TimeUnit.MINUTES.toNanos(2);
        for (int i = 0; i < threads.size(); i++) {
            threads.get(i).join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (threads.get(i).isAlive()) {
                plan.fail("client " + i + " still busy two minutes after the soak: " + clients.get(i).state);
            }
        }
        operator.stop = true;
        operatorThread.join(10_000);
        Thread.sleep(500);
        operator.sweep();
        Thread.sleep(2_000);
    }

    static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    static String clientsByDialect(List<SoakClient> clients) {
        Map<SoakDialect, Long> n = new EnumMap<>(SoakDialect.class);
        clients.forEach(c -> n.merge(c.dialect, 1L, Long::sum));
        return n.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
    }

    /**
     * What the client was shown is exactly what is stored: each seq it holds is stored (the text
     * deltas with their text), and from its first event to its last every stored event its dialect
     * shows is there, once, in order (the client checked order and duplicates as it went).
     */
    static void checkView(SoakClient c, List<Envelope> log, SoakPlan plan) {
        Map<Long, Envelope> bySeq = new HashMap<>();
        log.forEach(e -> bySeq.put(e.seq(), e));
        String who = "client " + c.index + " (" + c.dialect + ", " + c.conversation + ")";
        if (c.seqs.isEmpty()) {
            plan.fail(who + " was shown no event");
            return;
        }
        for (long cursor : c.resyncedFrom) {
            if (bySeq.containsKey(cursor)) {
                plan.fail(who + " was sent the whole conversation again for cursor " + cursor + ", which is stored");
            }
        }
        // The kill's gap: seqs of events shown before the kill and never stored (README "Crash recovery").
        long gapLow = Long.MAX_VALUE;
        long gapHigh = Long.MIN_VALUE;
        for (int i = 1; i < log.size(); i++) {
            if (log.get(i).seq() > log.get(i - 1).seq() + 1) {
                gapLow = log.get(i - 1).seq();
                gapHigh = log.get(i).seq();
            }
        }
        long low = gapLow;
        long high = gapHigh;
        for (long seq : c.seqs) {
            if (seq > low && seq < high) {
                plan.lostInTheGap.incrementAndGet();
            } else if (!bySeq.containsKey(seq)) {
                plan.fail(who + " was shown seq " + seq + ", which is not stored and not in the kill's gap ("
                        + low + ", " + high + "); resyncs from " + c.resyncedFrom + "; " + c.traced());
                break;
            }
        }
        c.texts.forEach((seq, text) -> {
            if (seq > low && seq < high) {
                return;
            }
            Envelope e = bySeq.get(seq);
            if (e == null || !(e.event() instanceof Event.TextDelta d) || !d.delta().equals(text)) {
                plan.fail(who + " was shown text '" + text + "' for seq " + seq + ", stored: " + e);
            }
        });
        if (c.stuck) {
            plan.fail(who + " stuck after seq " + c.cursor + "; stored after it: " + log.stream()
                    .filter(e -> e.seq() > c.cursor).limit(8).map(e -> e.seq() + " " + e.event().kind())
                    .collect(Collectors.joining(", ")));
        }
        Set<Long> shown = new HashSet<>(c.seqs);
        long first = c.seqs.get(0);
        boolean missedAny = false;
        for (Envelope e : log) {
            // The failure crash recovery gives a run the kill interrupted comes right after the gap.
            // An SSE client whose stream of that run ended before the kill (at an approval's
            // interrupt) has no stream to carry it: its next request opens a new run.
            boolean killsFailure = e.seq() == high && e.event() instanceof Event.RunFailed f
                    && f.code() == ErrorCode.UNAVAILABLE;
            if (killsFailure && !c.dialect.webSocket) {
                continue;
            }
            if (e.seq() >= first && e.seq() <= c.cursor && c.dialect.shown.contains(e.event().kind())
                    && !shown.contains(e.seq())) {
                // The client's steps around the first seq it missed tell how it went past it.
                plan.fail(who + " missed seq " + e.seq() + " (" + e.event().kind() + ")"
                        + (missedAny ? "" : "; its steps around it: " + c.tracedAround(e.seq())));
                missedAny = true;
            }
        }
    }

    /**
     * Every conversation's log is gapless but for the kill's one gap, and every stored run whole: it starts, ends once, each
     * message's deltas add up to its text and that text is one the demo writes; a run that did
     * not finish failed as asked ({@code crash}) or by the kill. Returns the store's figures.
     */
    static Map<String, Long> checkTranscripts(List<SoakClient> clients, ConversationStore store,
                                                      SoakPlan plan) {
        Map<String, Long> figures = new LinkedHashMap<>();
        long events = 0;
        long finished = 0;
        long failedAsAsked = 0;
        long failedByKill = 0;
        long conversationsWithAGap = 0;
        for (SoakClient c : clients) {
            List<Envelope> log = store.events(c.conversation, 0, Integer.MAX_VALUE);
            events += log.size();
            Map<String, List<Envelope>> runs = new LinkedHashMap<>();
            int gaps = 0;
            for (int i = 0; i < log.size(); i++) {
                Envelope e = log.get(i);
                long expected = i == 0 ? 1 : log.get(i - 1).seq() + 1;
                // One gap at most: the kill's, where the events the store had not got yet were lost
                // and the restarted gateway went on after the conversation's reservation.
                if (e.seq() != expected && (e.seq() < expected || ++gaps > 1)) {
                    plan.fail(c.conversation + ": stored seq " + e.seq() + " after " + (expected - 1));
                }
                runs.computeIfAbsent(e.runId(), k -> new ArrayList<>()).add(e);
            }
            conversationsWithAGap += gaps;
            for (Map.Entry<String, List<Envelope>> run : runs.entrySet()) {
                String where = c.conversation + " run " + run.getKey();
                List<Envelope> events1 = run.getValue();
                if (!(events1.get(0).event() instanceof Event.RunStarted)) {
                    plan.fail(where + " starts with " + events1.get(0).event().kind());
                }
                Event last = events1.get(events1.size() - 1).event();
                long ends = events1.stream().filter(e -> e.event() instanceof Event.RunFinished
                        || e.event() instanceof Event.RunFailed).count();
                if (ends != 1 || !(last instanceof Event.RunFinished || last instanceof Event.RunFailed)) {
                    plan.fail(where + " has " + ends + " ends, the last event " + last.kind());
                    continue;
                }
                Map<String, StringBuilder> texts = new HashMap<>();
                Set<String> open = new HashSet<>();
                for (Envelope e : events1) {
                    if (e.event() instanceof Event.MessageStarted m) {
                        texts.put(m.messageId(), new StringBuilder());
                        open.add(m.messageId());
                    } else if (e.event() instanceof Event.TextDelta d) {
                        texts.computeIfAbsent(d.messageId(), k -> new StringBuilder()).append(d.delta());
                    } else if (e.event() instanceof Event.MessageCompleted m) {
                        open.remove(m.messageId());
                        String streamed = String.valueOf(texts.get(m.messageId()));
                        if (!m.text().equals(streamed)) {
                            plan.fail(where + ": message " + m.messageId() + " streamed '" + streamed
                                    + "' but completed as '" + m.text() + "'");
                        }
                        if (!ANSWERS.contains(m.text())) {
                            plan.fail(where + ": the demo never writes '" + m.text() + "'");
                        }
                    }
                }
                if (last instanceof Event.RunFinished) {
                    finished++;
                    if (!open.isEmpty()) {
                        plan.fail(where + " finished with messages never completed: " + open);
                    }
                } else if (((Event.RunFailed) last).code() == ErrorCode.INTERNAL && texts.values().stream()
                        .anyMatch(t -> t.toString().equals("Let me look into that for you"))) {
                    failedAsAsked++;
                } else if (((Event.RunFailed) last).code() == ErrorCode.UNAVAILABLE) {
                    failedByKill++;
                } else {
                    plan.fail(where + " failed unasked: " + last);
                }
            }
        }
        figures.put("events stored", events);
        figures.put("runs finished", finished);
        figures.put("runs failed as asked", failedAsAsked);
        figures.put("runs failed by the kill", failedByKill);
        figures.put("conversations with the kill's seq gap", conversationsWithAGap);
        if (failedByKill > plan.clients) {
            plan.fail(failedByKill + " runs failed by the kill, more than the clients that had one running");
        }
        return figures;
    }
}
