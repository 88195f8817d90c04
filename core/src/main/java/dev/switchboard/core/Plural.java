package dev.switchboard.core;

/**
 * A count with its noun for messages and logs, the noun singular for exactly one:
 * {@code Plural.of(1, "active run")} is "1 active run", {@code Plural.of(0, "active run")} "0 active runs".
 * Every noun the gateway counts forms its plural with an -s.
 */
public final class Plural {
    private Plural() {
    }

    public static String of(long count, String noun) {
        return count + " " + noun + (count == 1 ? "" : "s");
    }
}
