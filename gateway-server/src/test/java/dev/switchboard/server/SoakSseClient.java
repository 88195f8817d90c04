package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A soak client of an SSE dialect (AG-UI over HTTP, AgentScope): each run is a POST whose answer
 * streams the run's events with {@code id: <seq>} lines; a dropped stream is picked up again with
 * a GET of the conversation's events and {@code Last-Event-ID}.
 */
final class SoakSseClient extends SoakClient {
    private static final HttpClient[] HTTP = new HttpClient[4];

    static {
        for (int i = 0; i < HTTP.length; i++) {
            HTTP[i] = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
        }
    }

    /** How reading a stream ended. */
    private enum End { RUN_ENDED, DROPPED, BROKEN, NOTHING }

    SoakSseClient(int index, SoakDialect dialect, String conversation, boolean slow, SoakPlan plan) {
        super(index, dialect, conversation, slow, plan);
    }

    private HttpClient http() {
        return HTTP[index % HTTP.length];
    }

    /** A request to a node picked at random. */
    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + pickNode() + path))
                .timeout(plan.frameWait).header("Accept", "text/event-stream");
    }

    @Override
    void open() {
        // Every run opens a stream of its own.
    }

    @Override
    void run(int dropAt) throws Exception {
        while (!ask(dropAt)) {
            // The request was taken, and lost whole with the kill: asked again, as a person would.
            plan.resentRequests.incrementAndGet();
        }
    }

    /** Asks for the run and follows it to its end; false if the kill lost it before anything of it was stored. */
    private boolean ask(int dropAt) throws Exception {
        HttpResponse<InputStream> answer;
        while (true) {
            try {
                HttpRequest.Builder post = request(dialect.postPath());
                trace("POST to :" + port);
                answer = http().send(post.header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(dialect.runRequest(conversation, prompt))).build(),
                        HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException e) {
                // Not sent, or sent and cut before its answer: a run it started is shown before asking again.
                lost("POST " + dialect.postPath() + ": " + e, Loss.ERROR);
                Thread.sleep(200);
                catchUp();
                continue;
            }
            if (answer.statusCode() == 200) {
                served(false);
                break;
            }
            String body = new String(answer.body().readAllBytes(), StandardCharsets.UTF_8);
            if (answer.statusCode() == 409 && busyExpected()) {
                plan.busyRetries.incrementAndGet();
                Thread.sleep(300);
                continue;
            }
            fail("POST " + dialect.postPath() + " to :" + port + " answered " + answer.statusCode() + ": " + body + "; "
                    + traced());
            return true;
        }
        End end = read(answer.body(), dropAt);
        while (end != End.RUN_ENDED) {
            if (end == End.DROPPED) {
                plan.plannedDisconnects.incrementAndGet();
                pause(800);
            } else if (end == End.NOTHING) {
                if (outlivedKill && plan.wasKilled()) {
                    // Events reach clients before they are stored: a run the kill cut short before
                    // its start was stored is gone, and the client's cursor has nothing after it.
                    trace("the run was lost with the kill; asking again");
                    return false;
                }
                fail("reattached in " + state + " and found nothing after seq " + cursor + ", nor a run; "
                        + traced());
                return true;
            } else {
                lost("the stream broke off before the run ended", Loss.UNEXPLAINED);
                Thread.sleep(200);
            }
            end = reattach();
        }
        return true;
    }

    /** Reattaches until the conversation has nothing after the cursor and no run active (204). */
    private void catchUp() throws InterruptedException {
        End end;
        while ((end = reattach()) != End.NOTHING) {
            if (end == End.BROKEN) {
                Thread.sleep(200);
            }
        }
    }

    /** {@code GET .../events} from the cursor: the rest of the run, or 204 when there is nothing to resume. */
    private End reattach() throws InterruptedException {
        HttpRequest.Builder get = request(dialect.reattachPath(conversation)).GET()
                .header("Last-Event-ID", Long.toString(cursor));
        try {
            HttpResponse<InputStream> answer = http().send(get.build(), HttpResponse.BodyHandlers.ofInputStream());
            if (answer.statusCode() == 204) {
                served(false);
                trace("reattached to :" + port + " after " + cursor + ": nothing");
                return End.NOTHING;
            }
            if (answer.statusCode() != 200) {
                String body = new String(answer.body().readAllBytes(), StandardCharsets.UTF_8);
                fail("GET " + dialect.reattachPath(conversation) + " answered " + answer.statusCode() + ": " + body);
                throw new IllegalStateException("cannot reattach");
            }
            trace("reattached to :" + port + " after " + cursor);
            resuming();
            served(true);
            return read(answer.body(), -1);
        } catch (IOException e) {
            lost("GET " + dialect.reattachPath(conversation) + ": " + e, Loss.ERROR);
            return End.BROKEN;
        }
    }

    /** Reads events until the run's end, the planned drop after {@code dropAt} events, or the stream's end. */
    private End read(InputStream body, int dropAt) throws InterruptedException {
        int events = 0;
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            long id = -1;
            String data = null;
            String line;
            while ((line = lines.readLine()) != null) {
                plan.bytesReceived.addAndGet(line.length() + 1);
                if (line.startsWith("id: ")) {
                    id = Long.parseLong(line.substring(4));
                } else if (line.startsWith("data: ")) {
                    data = line.substring(6);
                } else if (line.isEmpty() && data != null) {
                    JsonNode event = Json.MAPPER.readTree(data);
                    // Only the last SSE event of a stored event has its id.
                    if (id >= 0) {
                        record(id, event);
                        trace(id + " " + event.path("type").asText(event.path("object").asText()));
                    }
                    if (dialect.endsRun(event, prompt)) {
                        return End.RUN_ENDED;
                    }
                    readSlowly();
                    if (++events == dropAt) {
                        return End.DROPPED;
                    }
                    id = -1;
                    data = null;
                } else if (!line.isEmpty() && !line.startsWith(":")) {
                    fail("a line that is no SSE field: " + line);
                }
            }
            return End.BROKEN;
        } catch (IOException e) {
            return End.BROKEN;
        }
    }

    @Override
    void malformed(String input) throws Exception {
        plan.malformedSent.incrementAndGet();
        try {
            HttpResponse<String> answer = http().send(request(dialect.postPath())
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(input))
                    .build(), HttpResponse.BodyHandlers.ofString());
            JsonNode body = Json.MAPPER.readTree(answer.body());
            if ((answer.statusCode() == 400 || answer.statusCode() == 422) && body.isObject()) {
                plan.provokedErrors.incrementAndGet();
            } else {
                fail("the malformed body " + input + " got " + answer.statusCode() + ": " + answer.body());
            }
        } catch (IOException e) {
            lost("POST of a malformed body: " + e, Loss.ERROR);
        }
    }

    @Override
    void close() {
        // Streams close when read to their end or dropped.
    }
}
