package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import dev.switchboard.store.postgres.PostgresServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code /healthz} says whether the store serves: a PostgreSQL database that goes away, and comes back. */
class StoreHealthServerTest {
    @RegisterExtension
    static final PostgresServer postgres = new PostgresServer();

    @TempDir
    Path dir;

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static JsonNode health(int port) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                .build(), HttpResponse.BodyHandlers.ofString());
        // The node still serves its live connections: a store that is away is reported, not a 503.
        assertThat(r.statusCode()).isEqualTo(200);
        return Json.MAPPER.readTree(r.body());
    }

    /** Polls /healthz until it says what {@code wanted} looks for, for at most 20 s (checks run every 5 s). */
    private static JsonNode awaitHealth(int port, Predicate<JsonNode> wanted) throws Exception {
        Instant until = Instant.now().plusSeconds(20);
        JsonNode last = health(port);
        while (!wanted.test(last) && Instant.now().isBefore(until)) {
            Thread.sleep(200);
            last = health(port);
        }
        return last;
    }

    @Test
    void healthzReportsTheStoreGoingAwayAndComingBack() throws Exception {
        String url = postgres.newDatabase();
        try (TestGateway g = TestGateway.start(dir, Map.of("store-url", url))) {
            JsonNode up = awaitHealth(g.port(), h -> h.path("store").asText().equals("ok"));
            assertThat(up.path("store").asText()).isEqualTo("ok");
            assertThat(up.has("store_problem")).isFalse();

            postgres.stop();
            JsonNode down = awaitHealth(g.port(), h -> h.path("store").asText().equals("unavailable"));
            assertThat(down.path("store").asText()).isEqualTo("unavailable");
            assertThat(down.path("status").asText()).isEqualTo("ok");
            assertThat(down.path("store_problem").asText())
                    .startsWith("cannot reach the store localhost:" + postgres.port() + "/");

            postgres.restart();
            JsonNode back = awaitHealth(g.port(), h -> h.path("store").asText().equals("ok"));
            assertThat(back.path("store").asText()).isEqualTo("ok");
            assertThat(back.has("store_problem")).isFalse();
        }
    }
}
