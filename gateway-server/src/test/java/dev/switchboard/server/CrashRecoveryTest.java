package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.ApprovalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 in the middle of runs and with an A2H call waiting, then a restart on the same data
 * directory. Events reach clients before they are stored; what a client may hold of a crash's lost
 * events is answered by the README's rule: the next seqs come after every one it may hold, and a
 * cursor that names a lost event gets everything again from the start of the last run stored before it.
 */
class CrashRecoveryTest {
    @TempDir
    Path dir;

    /** A call to the A2H endpoints from this machine (served without a key): a POST with the body, else a GET. */
    private static HttpResponse<String> a2h(int port, String path, JsonNode body) throws Exception {
        var b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/humanlayer/v1" + path))
                .timeout(Duration.ofSeconds(10));
        if (body != null) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        }
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void afterKillNineTheRunIsFailedAfterEverySeqSeenAndApprovalsStayAnswerable() throws Exception {
        Path data = dir.resolve("data");
        ChildGateway child = slowGateway(data);
        int port = child.port;
        List<String> seen = new ArrayList<>();
        long seenSeq = 0;
        String approvalId;
        // An agent's A2H call, waiting for a person when the gateway dies.
        assertThat(a2h(port, "/function_calls", A2hServerTest.functionCall("crash-call", "send_email", null))
                .statusCode()).isBetween(200, 201);
        try (WsClient streaming = WsClient.connect(port, "/hai/ws"); WsClient approving = WsClient.connect(port, "/hai/ws")) {
            JsonNode request = approving.ask("crash-b", "please write the report")
                    .until(f -> f.path("type").asText().equals("tool_approval_request")).stream()
                    .reduce((a, b) -> b).orElseThrow();
            approvalId = request.path("approval_id").asText();
            streaming.ask("crash-a", "slow please");
            for (JsonNode f : streaming.until(f -> f.path("content").asText().startsWith("chunk 5 "))) {
                if (f.path("type").asText().equals("assistant_message_chunk")) {
                    seen.add(f.path("content").asText());
                }
                seenSeq = Math.max(seenSeq, f.path("seq").asLong());
            }
            child.kill();
        } finally {
            child.process.destroyForcibly();
        }

        try (TestGateway g = TestGateway.start(data)) {
            List<Envelope> log = g.server.hub().store().events("crash-a", 0, 10_000);
            List<String> stored = log.stream().filter(e -> e.event() instanceof Event.TextDelta)
                    .map(e -> ((Event.TextDelta) e.event()).delta()).toList();
            assertThat(seen.subList(0, Math.min(seen.size(), stored.size())))
                    .as("what is stored is what the client saw, in order").isEqualTo(stored.subList(0,
                            Math.min(seen.size(), stored.size())));
            for (int i = 0; i < log.size(); i++) {
                if (!(log.get(i).event() instanceof Event.RunFailed)) {
                    assertThat(log.get(i).seq()).as("stored events before the crash are consecutive").isEqualTo(i + 1);
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            // One read a check: the recovery may store the run's failure between two reads.
            List<Envelope> after = g.server.hub().store().events("crash-a", 0, 10_000);
            while (!(after.get(after.size() - 1).event() instanceof Event.RunFailed)) {
                assertThat(System.nanoTime()).as("the interrupted run is marked failed").isLessThan(deadline);
                Thread.sleep(20);
                after = g.server.hub().store().events("crash-a", 0, 10_000);
            }
            Event.RunFailed failed = (Event.RunFailed) after.get(after.size() - 1).event();
            assertThat(failed.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(after.get(after.size() - 1).runId()).isEqualTo(log.get(0).runId());
            assertThat(after.get(after.size() - 1).seq()).as("no seq a client may hold is handed out again")
                    .isGreaterThan(seenSeq);

            assertThat(g.server.hub().store().approval(approvalId)).get().extracting(ApprovalRecord::status)
                    .isEqualTo(ApprovalRecord.Status.PENDING);
            assertThat(g.server.hub().decideAsOperator(approvalId, true, "after the crash", null,
                    dev.switchboard.core.Principal.of("operator")).get(5, TimeUnit.SECONDS)).isNull();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (g.server.hub().store().messages("crash-b").stream().noneMatch(m -> m.content().contains("was generated"))) {
                assertThat(System.nanoTime()).as("the report run continued after the restart").isLessThan(deadline);
                Thread.sleep(20);
            }

            // The A2H call is still pending, and answerable.
            JsonNode pending = Json.MAPPER.readTree(a2h(g.port(), "/agent/function_calls/pending", null).body());
            assertThat(pending.path("items")).extracting(i -> i.path("call_id").asText()).contains("crash-call");
            assertThat(a2h(g.port(), "/agent/function_calls/crash-call/respond",
                    Json.object().put("approved", true).put("comment", "after the crash")).statusCode()).isEqualTo(200);
            JsonNode call = Json.MAPPER.readTree(a2h(g.port(), "/function_calls/crash-call", null).body());
            assertThat(call.at("/status/approved").asBoolean()).isTrue();
            assertThat(call.at("/status/comment").asText()).isEqualTo("after the crash");
        }
    }

    /**
     * The case the seq reservation is for: the client saw events the store never got (a test
     * connection holds SQLite's write lock, so the gateway's store writer waits while the run streams
     * on), then kill -9. After the restart, the client's cursor names a lost event: it gets
     * everything from the start of the interrupted run (not the finished run before it), ending with
     * the run's failure, whose seq comes after every one it saw. A cursor at the last stored event
     * gets exactly what follows.
     */
    @Test
    void aCursorThatOutranTheStoreBeforeKillNineGetsItsRunAgainFromItsStart() throws Exception {
        Path data = dir.resolve("data");
        ChildGateway child = slowGateway(data);
        String conversation = "crash-lost";
        String idle = "crash-idle";
        long idleSeq;
        long seenSeq = 0;
        List<String> seen = new ArrayList<>();
        try (WsClient c = WsClient.connect(child.port, "/hai/ws");
             Connection hold = DriverManager.getConnection("jdbc:sqlite:" + data.resolve("switchboard.db"));
             Statement s = hold.createStatement()) {
            s.execute("PRAGMA busy_timeout = 5000");
            // A conversation whose run ended, all stored, before the kill: its seqs are reserved all the same.
            idleSeq = c.ask(idle, "hello").untilCompleted().stream().mapToLong(f -> f.path("seq").asLong()).max()
                    .orElseThrow();
            c.ask(conversation, "hello").untilCompleted();
            c.ask(conversation, "slow please");
            List<JsonNode> frames = new ArrayList<>(c.until(f -> f.path("content").asText().startsWith("chunk 2 ")));
            // The store writes behind the stream: the run's start must be stored for recovery to find the run.
            long runFirstSeq = frames.stream().filter(f -> f.has("seq")).mapToLong(f -> f.path("seq").asLong()).min()
                    .orElseThrow();
            awaitStoredUpTo(hold, conversation, runFirstSeq);
            s.execute("BEGIN IMMEDIATE");
            // Chunks from here on reach the client while the store writer waits for the lock.
            frames.addAll(c.until(f -> f.path("content").asText().startsWith("chunk 8 ")));
            child.kill();
            s.execute("ROLLBACK");
            for (JsonNode f : frames) {
                seenSeq = Math.max(seenSeq, f.path("seq").asLong());
                if (f.path("type").asText().equals("assistant_message_chunk")) {
                    seen.add(f.path("content").asText());
                }
            }
        } finally {
            child.process.destroyForcibly();
        }

        try (TestGateway g = TestGateway.start(data)) {
            List<Envelope> log = awaitRunFailed(g, conversation);
            Envelope failed = log.get(log.size() - 1);
            long lastStored = log.get(log.size() - 2).seq();
            assertThat(lastStored).as("the client saw events the store lost").isLessThan(seenSeq);
            List<String> stored = log.stream().filter(e -> e.event() instanceof Event.TextDelta
                    && e.runId().equals(failed.runId())).map(e -> ((Event.TextDelta) e.event()).delta()).toList();
            assertThat(stored.size()).as("chunks seen and lost").isLessThan(seen.size());
            assertThat(seen.subList(0, stored.size())).as("the store holds what was seen, in order").isEqualTo(stored);
            assertThat(failed.seq()).as("no seq a client may hold is handed out again").isGreaterThan(seenSeq);

            try (WsClient back = g.connect("/hai/ws?session_id=" + conversation + "&last_seq=" + seenSeq)) {
                long failedSeq = failed.seq();
                List<JsonNode> again = back.until(f -> f.path("seq").asLong() == failedSeq);
                List<Long> seqs = again.stream().filter(f -> f.has("seq")).map(f -> f.path("seq").asLong()).toList();
                long runStart = log.stream().filter(e -> e.event() instanceof Event.RunStarted
                        && e.runId().equals(failed.runId())).findFirst().orElseThrow().seq();
                assertThat(runStart).as("a run came before").isGreaterThan(1);
                assertThat(seqs.get(0)).as("from the interrupted run's start").isBetween(runStart, runStart + 1);
                assertThat(seqs).as("in order").isSorted();
                assertThat(seqs).as("only events the store has").allMatch(q -> log.stream().anyMatch(e -> e.seq() == q));
                assertThat(again.stream().filter(f -> f.path("type").asText().equals("assistant_message_chunk"))
                        .map(f -> f.path("content").asText())).as("every stored chunk of the run, once")
                        .containsExactlyElementsOf(log.stream().filter(e -> e.event() instanceof Event.TextDelta
                                && e.seq() > runStart).map(e -> ((Event.TextDelta) e.event()).delta()).toList());
            }
            HttpResponse<String> reattach = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + g.port() + "/agui/threads/" + idle + "/events"))
                    .header("Last-Event-ID", Long.toString(idleSeq)).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(reattach.statusCode()).as("an idle conversation's last cursor: nothing to resume, at once")
                    .isEqualTo(204);
            try (WsClient back = g.connect("/hai/ws?session_id=" + conversation + "&last_seq=" + lastStored)) {
                JsonNode next = back.until(f -> f.has("seq")).stream().filter(f -> f.has("seq")).findFirst().orElseThrow();
                assertThat(next.path("seq").asLong()).as("a stored cursor goes on at the run's failure")
                        .isEqualTo(failed.seq());
            }
        }
    }

    /** A gateway in a child process on {@code data}, its demo agent pausing 50 ms between chunks. */
    private ChildGateway slowGateway(Path data) throws Exception {
        java.nio.file.Files.createDirectories(data);
        return ChildGateway.start(data, ChildGateway.freePort(), dir.resolve("child.log"), List.of(),
                "--demo-delay-ms", "50");
    }

    /** Waits (5 s at most) until the store file, read through {@code db}, holds the conversation's events up to {@code seq}. */
    private static void awaitStoredUpTo(Connection db, String conversation, long seq) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        try (PreparedStatement stored = db.prepareStatement("SELECT IFNULL(MAX(IFNULL(e.last_seq, e.seq)), 0)"
                + " FROM events e JOIN conversations c ON e.conversation_key = c.key WHERE c.id = ?")) {
            stored.setString(1, conversation);
            while (true) {
                try (ResultSet rs = stored.executeQuery()) {
                    if (rs.next() && rs.getLong(1) >= seq) {
                        return;
                    }
                }
                assertThat(System.nanoTime()).as("the store holds seq %d of %s", seq, conversation).isLessThan(deadline);
                Thread.sleep(10);
            }
        }
    }

    /** The conversation's stored events once crash recovery has stored the interrupted run's failure. */
    private static List<Envelope> awaitRunFailed(TestGateway g, String conversation) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            List<Envelope> log = g.server.hub().store().events(conversation, 0, 10_000);
            if (!log.isEmpty() && log.get(log.size() - 1).event() instanceof Event.RunFailed) {
                return log;
            }
            assertThat(System.nanoTime()).as("the interrupted run is marked failed").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
