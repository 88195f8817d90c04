package dev.switchboard.bench;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Where in time a paced measurement's slow frames fell: its frames counted in windows of
 * {@value #WINDOW_MILLIS} ms of the client's clock from the measurement's start, each window's
 * slowest latency and how many of its frames took {@value #SLOW_MICROS} µs or more. A latency tail
 * that is one server pause reads as one short episode of slow windows; a backlog as a longer one; a
 * machine whose cores are taken now and then as many small ones. One reading thread writes each
 * instance; {@link #merge} joins those of every thread once the measurement is over.
 */
public final class Timeline {
    static final int WINDOW_MILLIS = 10;
    private static final long WINDOW_NANOS = WINDOW_MILLIS * 1_000_000L;
    /** Twice the 2-ms budget over a bare server's p99 of about 2-4 ms: a frame the target would miss. */
    static final long SLOW_MICROS = 4_000;
    /** Slow windows at most this many windows apart belong to one episode. */
    private static final int EPISODE_GAP_WINDOWS = 2;
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    private final long startNanos;
    private final long startEpochMillis;
    private long[] frames = new long[1024];
    private long[] slow = new long[1024];
    private long[] maxMicros = new long[1024];
    private int windows;

    Timeline(long startNanos, long startEpochMillis) {
        this.startNanos = startNanos;
        this.startEpochMillis = startEpochMillis;
    }

    /** A frame read at {@code nowNanos} (the client's {@link System#nanoTime}) with this latency. */
    void add(long nowNanos, long latencyMicros) {
        int w = (int) Math.max(0, (nowNanos - startNanos) / WINDOW_NANOS);
        ensure(w);
        frames[w]++;
        if (latencyMicros >= SLOW_MICROS) {
            slow[w]++;
        }
        if (latencyMicros > maxMicros[w]) {
            maxMicros[w] = latencyMicros;
        }
        windows = Math.max(windows, w + 1);
    }

    /** One timeline of every thread's, over the same start. */
    static Timeline merge(long startNanos, long startEpochMillis, List<Timeline> parts) {
        Timeline all = new Timeline(startNanos, startEpochMillis);
        for (Timeline t : parts) {
            for (int w = 0; w < t.windows; w++) {
                if (t.frames[w] == 0) {
                    continue;
                }
                all.ensure(w);
                all.frames[w] += t.frames[w];
                all.slow[w] += t.slow[w];
                all.maxMicros[w] = Math.max(all.maxMicros[w], t.maxMicros[w]);
                all.windows = Math.max(all.windows, w + 1);
            }
        }
        return all;
    }

    private void ensure(int w) {
        if (w >= frames.length) {
            int size = Math.max(w + 1, 2 * frames.length);
            frames = Arrays.copyOf(frames, size);
            slow = Arrays.copyOf(slow, size);
            maxMicros = Arrays.copyOf(maxMicros, size);
        }
    }

    /** A run of slow windows: from window {@code first} to {@code last}, both with slow frames. */
    record Episode(int first, int last, long slowFrames, long maxMicros) {
        double startSeconds() {
            return first * WINDOW_MILLIS / 1000.0;
        }

        int lengthMillis() {
            return (last - first + 1) * WINDOW_MILLIS;
        }
    }

    /** Every episode of slow windows, in time order. */
    List<Episode> episodes() {
        List<Episode> out = new ArrayList<>();
        int first = -1;
        int last = -1;
        long slowFrames = 0;
        long max = 0;
        for (int w = 0; w < windows; w++) {
            if (slow[w] == 0) {
                continue;
            }
            if (first >= 0 && w - last > EPISODE_GAP_WINDOWS) {
                out.add(new Episode(first, last, slowFrames, max));
                first = -1;
            }
            if (first < 0) {
                first = w;
                slowFrames = 0;
                max = 0;
            }
            last = w;
            slowFrames += slow[w];
            max = Math.max(max, maxMicros[w]);
        }
        if (first >= 0) {
            out.add(new Episode(first, last, slowFrames, max));
        }
        return out;
    }

    long frames() {
        return Arrays.stream(frames, 0, windows).sum();
    }

    long slowFrames() {
        return Arrays.stream(slow, 0, windows).sum();
    }

    /**
     * One line: the slow frames' share, how many episodes they fell in, and the {@code worst} with the
     * most slow frames, each at its offset from the start (whose UTC time is given, to line it up with a
     * server's GC log).
     */
    String describe(int worst) {
        long all = frames();
        long slowAll = slowFrames();
        List<Episode> episodes = episodes();
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "  tail from %s: %,d of %,d frames (%.2f%%) took ≥ %d ms, in %d episode%s of %d-ms windows",
                CLOCK.format(Instant.ofEpochMilli(startEpochMillis)), slowAll, all, all == 0 ? 0 : 100.0 * slowAll / all,
                SLOW_MICROS / 1000, episodes.size(), episodes.size() == 1 ? "" : "s", WINDOW_MILLIS));
        List<Episode> top = new ArrayList<>(episodes);
        top.sort(Comparator.comparingLong(Episode::slowFrames).reversed());
        long inTop = 0;
        for (int i = 0; i < Math.min(worst, top.size()); i++) {
            Episode e = top.get(i);
            inTop += e.slowFrames();
            b.append(String.format(Locale.ROOT, "%s +%.2fs %d ms (%,d frames, max %.1f ms)", i == 0 ? "; most at" : ",",
                    e.startSeconds(), e.lengthMillis(), e.slowFrames(), e.maxMicros() / 1000.0));
        }
        if (!top.isEmpty() && slowAll > 0) {
            b.append(String.format(Locale.ROOT, ": %.0f%% of them", 100.0 * inTop / slowAll));
        }
        return b.toString();
    }
}
