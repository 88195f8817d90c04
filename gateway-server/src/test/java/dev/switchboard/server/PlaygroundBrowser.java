package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.ConversationStore;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs a scenario of {@code src/test/node/playground-browser.mjs}: headless Chromium (Debian's
 * {@code chromium}, driven by {@code playwright-core}) on the playground page of a gateway. Each
 * run saves a screenshot under {@code target/playground-screenshots}.
 */
final class PlaygroundBrowser {
    static final Path SCREENSHOTS = Path.of("target", "playground-screenshots").toAbsolutePath();
    private static final List<String> CANDIDATES = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser");

    private PlaygroundBrowser() {
    }

    /**
     * The Chromium to drive: {@code CHROMIUM_PATH}, else Debian's. A machine without one fails the
     * browser tests with what to install, rather than skipping them.
     */
    static String chromium() {
        String given = System.getenv("CHROMIUM_PATH");
        Stream<String> paths = given != null && !given.isBlank() ? Stream.of(given) : CANDIDATES.stream();
        Optional<String> found = paths.filter(p -> Files.isExecutable(Path.of(p))).findFirst();
        if (found.isEmpty()) {
            fail("The playground's browser tests need Chromium, and none is installed (looked for "
                    + (given != null && !given.isBlank() ? "CHROMIUM_PATH=" + given : String.join(", ", CANDIDATES))
                    + "). Install Debian's package with scripts/install-chromium.sh (or sudo apt-get install -y "
                    + "chromium; README, Quick start), or point CHROMIUM_PATH at a Chromium binary.");
        }
        return found.get();
    }

    /** Runs the scenario against the gateway on this port and answers its result. */
    static JsonNode run(String scenario, int port, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(scenario, "http://127.0.0.1:" + port, SCREENSHOTS.toString()));
        all.addAll(List.of(args));
        NodeClient.Result r = NodeClient.run("playground-browser.mjs", Map.of("CHROMIUM_PATH", chromium()), 120,
                all.toArray(String[]::new));
        String result = r.lines().stream().filter(l -> l.startsWith("RESULT ")).findFirst().orElse(null);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(result).as(r.output()).isNotNull();
        return Json.MAPPER.readTree(result.substring("RESULT ".length()));
    }

    /** The conversation's stored events once its last run has ended (the store writes just behind). */
    static List<Envelope> storedRun(ConversationStore store, String conversationId) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<Envelope> events = List.of();
        while (System.nanoTime() < deadline) {
            events = store.events(conversationId, 0, 100_000);
            if (!events.isEmpty() && (events.get(events.size() - 1).event() instanceof Event.RunFinished
                    || events.get(events.size() - 1).event() instanceof Event.RunFailed)) {
                return events;
            }
            Thread.sleep(50);
        }
        fail("the run of " + conversationId + " was not stored as ended: " + events);
        return events;
    }

    /** The seqs a JSON array holds. */
    static List<Long> seqs(JsonNode array) {
        List<Long> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asLong()));
        return out;
    }

    /** The text of the stored messages' MessageCompleted events, in order. */
    static List<String> answers(List<Envelope> events) {
        return events.stream().map(Envelope::event).filter(e -> e instanceof Event.MessageCompleted)
                .map(e -> ((Event.MessageCompleted) e).text()).toList();
    }
}
