package dev.switchboard.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Gateway-level moderation: a message containing a blocked word (whole word, any case)
 * starts no run and gets the MODERATION error in its dialect.
 */
public final class Moderation {
    private static final String DEFAULT_LIST = "blocked-words.txt";

    private final Set<String> blocked;

    private Moderation(Set<String> blocked) {
        this.blocked = Set.copyOf(blocked);
    }

    /** Moderation that blocks nothing. */
    public static Moderation disabled() {
        return new Moderation(Set.of());
    }

    /** The built-in list of common English profanity. */
    public static Moderation defaults() {
        InputStream in = Moderation.class.getResourceAsStream(DEFAULT_LIST);
        if (in == null) {
            throw new IllegalStateException("the default blocked-word list is missing from the core jar");
        }
        try (in) {
            return new Moderation(parse(in));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Blocks exactly these words. */
    public static Moderation of(Collection<String> words) {
        Set<String> set = new HashSet<>();
        for (String w : words) {
            String t = w.strip().toLowerCase(Locale.ROOT);
            if (!t.isEmpty()) {
                set.add(t);
            }
        }
        return new Moderation(set);
    }

    /** Reads a list: one word a line; blank lines and lines starting with {@code #} are skipped. */
    public static Set<String> parse(InputStream in) throws IOException {
        Set<String> words = new HashSet<>();
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line; (line = r.readLine()) != null; ) {
            String t = line.strip().toLowerCase(Locale.ROOT);
            if (!t.isEmpty() && !t.startsWith("#")) {
                words.add(t);
            }
        }
        return words;
    }

    /** The first blocked word in {@code text}, if any. */
    public Optional<String> firstBlocked(String text) {
        if (blocked.isEmpty()) {
            return Optional.empty();
        }
        int n = text.length();
        int i = 0;
        while (i < n) {
            while (i < n && !Character.isLetterOrDigit(text.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '\'')) {
                i++;
            }
            if (i > start) {
                String word = text.substring(start, i).toLowerCase(Locale.ROOT);
                if (blocked.contains(word)) {
                    return Optional.of(word);
                }
            }
        }
        return Optional.empty();
    }

    /** How many words are blocked. */
    public int size() {
        return blocked.size();
    }
}
