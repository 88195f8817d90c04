package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.WebSocketHandshakeException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** Every WebSocket dialect carries the resume cursor on its frames and resumes from it on reconnect. */
class ResumeTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    private static long lastSeq(List<JsonNode> frames) {
        return frames.stream().filter(f -> f.has("seq")).mapToLong(f -> f.path("seq").asLong()).max().orElseThrow();
    }

    @Test
    void aHaiClientResumesFromItsCursorWithNothingMissedAndNothingTwice() {
        String s = UUID.randomUUID().toString();
        long cursor;
        try (WsClient c = gateway.connect("/hai/ws")) {
            List<JsonNode> frames = c.ask(s, "hello").untilCompleted();
            assertThat(frames).allSatisfy(f -> assertThat(f.has("seq")).as(f.toString()).isTrue());
            cursor = lastSeq(frames);
        }
        // While it is away, the conversation goes on from another connection.
        try (WsClient other = gateway.connect("/hai/ws")) {
            other.ask(s, "search the rules").untilCompleted();
        }
        try (WsClient back = gateway.connect("/hai/ws?session_id=" + s + "&last_seq=" + cursor)) {
            List<JsonNode> missed = back.untilCompleted();
            assertThat(missed.get(0).path("seq").asLong()).isEqualTo(cursor + 1);
            long previous = cursor;
            for (JsonNode f : missed) {
                assertThat(f.path("seq").asLong()).as("in order, no duplicate").isGreaterThanOrEqualTo(previous);
                previous = f.path("seq").asLong();
            }
            assertThat(missed).anyMatch(f -> f.path("type").asText().equals("tool_call"));
            assertThat(back.drain(Duration.ofMillis(300))).isEmpty();
            // Then live events, as for any member of the conversation.
            back.ask(s, "one more");
            assertThat(back.untilCompleted().get(0).path("seq").asLong()).isGreaterThan(previous);
        }
    }

    /**
     * A client's cursor after a first run of the conversation, and a second run, from another
     * connection, that it has missed.
     */
    private static long cursorBeforeAMissedRun(String conversation, String missed) {
        long cursor;
        try (WsClient c = gateway.connect("/hai/ws")) {
            cursor = lastSeq(c.ask(conversation, "hello").untilCompleted());
        }
        try (WsClient other = gateway.connect("/hai/ws")) {
            other.ask(conversation, missed).untilCompleted();
        }
        return cursor;
    }

    @Test
    void theReadmeResumeUrlOnTheSharedPathReplaysBeforeTheClientSendsAnything() {
        String s = UUID.randomUUID().toString();
        long cursor = cursorBeforeAMissedRun(s, "search the rules");
        // No subprotocol and no frame sent: session_id alone chooses HAI at the upgrade.
        try (WsClient back = gateway.connect("/ws?session_id=" + s + "&last_seq=" + cursor)) {
            List<JsonNode> missed = back.untilCompleted();
            assertThat(missed.get(0).path("seq").asLong()).isEqualTo(cursor + 1);
            assertThat(missed).anyMatch(f -> f.path("type").asText().equals("tool_call"));
        }
    }

    @Test
    void aThreadIdOnTheSharedPathChoosesAguiAndReplaysAtOnce() {
        String thread = UUID.randomUUID().toString();
        long cursor = cursorBeforeAMissedRun(thread, "one more");
        try (WsClient back = gateway.connect("/ws?threadId=" + thread + "&last_seq=" + cursor)) {
            List<JsonNode> missed = back.until(e -> e.path("type").asText().equals("RUN_FINISHED"));
            assertThat(missed.get(0).path("type").asText()).isEqualTo("RUN_STARTED");
            assertThat(missed.get(missed.size() - 1).path("metadata").path("seq").asLong()).isGreaterThan(cursor);
        }
    }

    @Test
    void joiningMidRunWithoutACursorShowsTheRunFromItsStart() {
        String s = UUID.randomUUID().toString();
        try (WsClient starter = gateway.connect("/hai/ws")) {
            starter.ask(s, "slow please");
            starter.until(f -> f.path("content").asText().startsWith("chunk 3"));
            try (WsClient late = gateway.connect("/hai/ws?session_id=" + s)) {
                List<JsonNode> frames = late.untilCompleted();
                assertThat(frames.get(0).path("status").asText()).isEqualTo("thinking");
                StringBuilder text = new StringBuilder();
                frames.forEach(f -> text.append(f.path("content").asText()));
                assertThat(text.toString()).startsWith("chunk 1 chunk 2 chunk 3").contains("chunk 50.");
            }
        }
    }

    @Test
    void voiceAssistAndAguiCarryTheCursorWhereTheirClientsTolerateIt() {
        String conversation = UUID.randomUUID().toString();
        long cursor;
        try (WsClient voice = gateway.connect("/api/realtime/ws?conversationId=" + conversation)) {
            assertThat(voice.next().has("seq")).as("connected is not an event").isFalse();
            List<JsonNode> frames = voice.send("{\"type\":\"message\",\"content\":\"hello\"}")
                    .until(f -> f.path("type").asText().equals("message_complete"));
            assertThat(frames).allSatisfy(f -> assertThat(f.has("seq")).isTrue());
            cursor = lastSeq(frames);
        }
        try (WsClient agui = gateway.connect("/agui/ws?threadId=" + conversation + "&last_seq=" + cursor)) {
            var in = Json.object().put("threadId", conversation);
            in.putArray("messages").addObject().put("id", UUID.randomUUID().toString()).put("role", "user")
                    .put("content", "and now?");
            List<JsonNode> events = agui.send(in.toString()).until(e -> e.path("type").asText().equals("RUN_FINISHED"));
            // One core event may be several AG-UI events; only the last of them carries its cursor.
            assertThat(events).allSatisfy(e -> {
                assertThat(e.has("seq")).isFalse();
                assertThat(e.path("metadata").path("seq").asLong(Long.MAX_VALUE)).isGreaterThan(cursor);
            });
            assertThat(events.get(events.size() - 1).path("metadata").path("seq").asLong()).isGreaterThan(cursor);
        }
        try (WsClient voice = gateway.connect("/api/realtime/ws?conversationId=" + conversation + "&last_seq=" + cursor)) {
            voice.next();
            List<JsonNode> missed = voice.until(f -> f.path("type").asText().equals("message_complete"));
            assertThat(missed.get(0).path("type").asText()).isEqualTo("message_start");
            assertThat(missed.get(missed.size() - 1).path("content").asText()).contains("chilled food");
        }
    }

    @Test
    void aResumeInsideARunContinuesItAsTheClientSawIt() {
        String conversation = UUID.randomUUID().toString();
        JsonNode third;
        try (WsClient voice = gateway.connect("/api/realtime/ws?conversationId=" + conversation)) {
            voice.next();
            third = voice.send("{\"type\":\"message\",\"content\":\"slow please\"}")
                    .until(f -> f.path("chunk_index").asInt(-1) == 2).stream().reduce((a, b) -> b).orElseThrow();
        }
        try (WsClient voice = gateway.connect("/api/realtime/ws?conversationId=" + conversation + "&last_seq="
                + third.path("seq").asLong())) {
            voice.next();
            List<JsonNode> rest = voice.until(f -> f.path("type").asText().equals("message_complete"));
            // No second message_start, and the chunk numbers go on rather than starting again at 0.
            assertThat(rest.get(0).path("type").asText()).isEqualTo("message_chunk");
            assertThat(rest.get(0).path("chunk_index").asInt()).isEqualTo(3);
            assertThat(rest.get(0).path("message_id").asText()).isEqualTo(third.path("message_id").asText());
        }

        String thread = UUID.randomUUID().toString();
        var in = Json.object().put("threadId", thread);
        in.putArray("messages").addObject().put("id", UUID.randomUUID().toString()).put("role", "user")
                .put("content", "hello");
        long lastDelta;
        try (WsClient agui = gateway.connect("/agui/ws?threadId=" + thread)) {
            List<JsonNode> run = agui.send(in.toString()).until(e -> e.path("type").asText().equals("RUN_FINISHED"));
            // The run's start is two AG-UI events of one stored event: only the second carries its cursor.
            assertThat(run.get(0).path("type").asText()).isEqualTo("RUN_STARTED");
            assertThat(run.get(0).has("metadata")).isFalse();
            assertThat(run.get(1).path("type").asText()).isEqualTo("STATE_SNAPSHOT");
            assertThat(run.get(1).path("metadata").path("seq").asLong()).isPositive();
            lastDelta = run.stream().filter(e -> e.path("type").asText().equals("TEXT_MESSAGE_CONTENT"))
                    .mapToLong(e -> e.path("metadata").path("seq").asLong()).max().orElseThrow();
        }
        try (WsClient agui = gateway.connect("/agui/ws?threadId=" + thread + "&last_seq=" + lastDelta)) {
            List<String> types = AguiHttp.types(agui.until(e -> e.path("type").asText().equals("RUN_FINISHED")));
            // The run goes on as the client saw it: the message it had open ends, nothing starts again.
            assertThat(types).doesNotContain("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_START", "RUN_STARTED")
                    .containsSubsequence("TEXT_MESSAGE_END", "RUN_FINISHED");
        }
    }

    private static java.net.http.HttpResponse<String> http(java.net.http.HttpRequest.Builder b) throws Exception {
        return java.net.http.HttpClient.newHttpClient().send(b.timeout(Duration.ofSeconds(20)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    private static java.net.URI uri(String path) {
        return java.net.URI.create("http://127.0.0.1:" + gateway.port() + path);
    }

    /** The SSE ids of a body, in order. */
    private static List<Long> ids(String body) {
        return body.lines().filter(l -> l.startsWith("id: ")).map(l -> Long.parseLong(l.substring(4))).toList();
    }

    @Test
    void anAguiClientReattachesToAThreadFromItsLastEventId() throws Exception {
        String thread = UUID.randomUUID().toString();
        var input = Json.object().put("threadId", thread).put("runId", UUID.randomUUID().toString());
        input.putArray("messages").addObject().put("id", "m1").put("role", "user").put("content", "search the rules");
        String first = http(java.net.http.HttpRequest.newBuilder(uri("/agui"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(input.toString()))).body();
        List<Long> seen = ids(first);
        // Reattach right after the answer's last delta: its end must not bring the text again.
        long lastDelta = 0;
        for (String block : first.split("\n\n")) {
            if (block.startsWith("id: ") && block.contains("\"TEXT_MESSAGE_CONTENT\"")) {
                lastDelta = Long.parseLong(block.lines().findFirst().orElseThrow().substring(4));
            }
        }
        long cursor = lastDelta;
        assertThat(cursor).isPositive();

        var again = http(java.net.http.HttpRequest.newBuilder(uri("/agui/threads/" + thread + "/events"))
                .header("Last-Event-ID", Long.toString(cursor)));
        assertThat(again.statusCode()).isEqualTo(200);
        List<JsonNode> events = AguiHttp.events(again.body());
        assertThat(events.get(0).path("type").asText()).isEqualTo("RUN_STARTED");
        assertThat(events.get(events.size() - 1).path("type").asText()).isEqualTo("RUN_FINISHED");
        // One core event may be several AG-UI events: they share its id.
        assertThat(ids(again.body()).stream().distinct().toList()).allSatisfy(id -> assertThat(id).isGreaterThan(cursor))
                .containsExactlyElementsOf(seen.stream().filter(id -> id > cursor).distinct().toList());

        // The text the client had before its cursor and the text after it make the answer, each once.
        StringBuilder before = new StringBuilder();
        List<JsonNode> pendingEvents = new java.util.ArrayList<>();
        for (String block : first.split("\n\n")) {
            List<String> lines = block.lines().toList();
            pendingEvents.add(Json.MAPPER.readTree(lines.get(lines.size() - 1).substring("data: ".length())));
            if (lines.get(0).startsWith("id: ")) {
                if (Long.parseLong(lines.get(0).substring(4)) <= cursor) {
                    before.append(AguiHttp.text(pendingEvents));
                }
                pendingEvents.clear();
            }
        }
        assertThat(before + AguiHttp.text(events)).isEqualTo(AguiHttp.text(AguiHttp.events(first)));

        var whole = http(java.net.http.HttpRequest.newBuilder(uri("/agui/threads/" + thread + "/events")));
        assertThat(AguiHttp.types(AguiHttp.events(whole.body()))).containsSubsequence("RUN_STARTED",
                "TOOL_CALL_START", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED");
        assertThat(ids(whole.body()).get(0)).isEqualTo(seen.get(0));

        // A client that has seen everything and finds no run active is told so at once: 204.
        var caughtUp = http(java.net.http.HttpRequest.newBuilder(uri("/agui/threads/" + thread + "/events"))
                .header("Last-Event-ID", Long.toString(seen.get(seen.size() - 1))));
        assertThat(caughtUp.statusCode()).isEqualTo(204);
        assertThat(caughtUp.body()).isEmpty();

        var bad = http(java.net.http.HttpRequest.newBuilder(uri("/agui/threads/" + thread + "/events"))
                .header("Last-Event-ID", "soon"));
        assertThat(bad.statusCode()).isEqualTo(400);
    }

    @Test
    void anAgentScopeClientReattachesToASession() throws Exception {
        String session = UUID.randomUUID().toString();
        var req = Json.object().put("session_id", session);
        req.putArray("input").addObject().put("role", "user").put("content", "hello");
        String first = http(java.net.http.HttpRequest.newBuilder(uri("/process"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(req.toString()))).body();
        List<Long> seen = ids(first);
        var again = http(java.net.http.HttpRequest.newBuilder(uri("/process/sessions/" + session + "/events"))
                .header("Last-Event-ID", Long.toString(seen.get(0))));
        assertThat(again.statusCode()).isEqualTo(200);
        List<JsonNode> events = again.body().lines().filter(l -> l.startsWith("data: "))
                .map(l -> {
                    try {
                        return Json.MAPPER.readTree(l.substring(6));
                    } catch (java.io.IOException e) {
                        throw new AssertionError(e);
                    }
                }).toList();
        assertThat(events.get(0).path("status").asText()).isEqualTo("created");
        assertThat(events.get(events.size() - 1).path("status").asText()).isEqualTo("completed");
        assertThat(events.get(events.size() - 1).path("session_id").asText()).isEqualTo(session);
    }

    @Test
    void aReattachWithoutACursorToAConversationThatDoesNotExistGets404AtOnce() throws Exception {
        for (String path : List.of("/agui/threads/" + UUID.randomUUID() + "/events",
                "/process/sessions/" + UUID.randomUUID() + "/events")) {
            var res = http(java.net.http.HttpRequest.newBuilder(uri(path)));
            assertThat(res.statusCode()).as(path).isEqualTo(404);
        }
    }

    @Test
    void aMalformedCursorIsRefusedAtTheUpgrade() {
        for (String path : List.of("/hai/ws?session_id=s&last_seq=x", "/agui/ws?threadId=t&last_seq=-1",
                "/api/realtime/ws?conversationId=c&last_seq=1.5")) {
            Throwable t = catchThrowable(() -> gateway.connect(path).close());
            assertThat(t).as(path).hasCauseInstanceOf(WebSocketHandshakeException.class);
            assertThat(((WebSocketHandshakeException) t.getCause()).getResponse().statusCode()).isEqualTo(400);
        }
    }
}
