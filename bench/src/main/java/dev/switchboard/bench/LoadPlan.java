package dev.switchboard.bench;

import java.time.Duration;

/**
 * One load measurement: how many clients of which dialect, how many {@code benchmark <n>} runs
 * each, and how they are paced: back to back ({@code interval} zero), or each client starting a
 * run every {@code interval} at a random phase (an open schedule of a set rate). It stops by
 * itself after {@code limit} whatever is left.
 */
public record LoadPlan(Dialect dialect, int clients, int runsPerClient, int chunks, Duration interval,
                       Duration limit) {
    /** The text of every chunk of a {@code benchmark} run, as the demo agent writes it. */
    public static final String CHUNK_TEXT = "token ";

    public LoadPlan {
        if (clients < 1 || runsPerClient < 1 || chunks < 1 || chunks > 100_000) {
            throw new IllegalArgumentException("clients, runs and chunks (at most 100000) must be positive");
        }
    }

    /** What each run asks the demo agent. */
    public String message() {
        return "benchmark " + chunks;
    }

    public boolean paced() {
        return !interval.isZero();
    }
}
