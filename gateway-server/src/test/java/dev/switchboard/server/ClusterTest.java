package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.cluster.redis.RedisServerExtension;
import dev.switchboard.core.Json;
import dev.switchboard.store.postgres.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.WebSocketHandshakeException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

import static dev.switchboard.server.AguiHttp.input;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Three gateway nodes, each its own JVM, on one PostgreSQL database and one Redis, as they run
 * behind a load balancer: clients of any dialect on any node share a conversation's events in one
 * order, a run on one node streams to the others, a cursor from one node resumes on another, an
 * approval is answered from a node that does not run it, one run per conversation holds across the
 * cluster, and a node killed with SIGKILL mid-run has its run failed by another node.
 */
class ClusterTest {
    @RegisterExtension
    static final PostgresServer postgres = new PostgresServer();
    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** Short leases, so that a killed node's run is failed within seconds. */
    private static final String LEASE_MS = "3000";
    /** A short stream in Redis, so that a slow run's first events are only in PostgreSQL by its end. */
    private static final String STREAM_MAX = "30";
    /** How often a node checks its store and Redis for {@code /healthz}. */
    private static final Duration HEALTH_CHECK_EVERY = Duration.ofSeconds(5);

    @TempDir
    static Path dir;

    private static String storeUrl;
    private static ChildGateway a;
    private static ChildGateway b;
    private static ChildGateway c;

    @BeforeAll
    static void startNodes() throws Exception {
        storeUrl = postgres.newDatabase();
        a = node("a");
        b = node("b");
        c = node("c");
    }

    @AfterAll
    static void stopNodes() throws InterruptedException {
        for (ChildGateway n : new ChildGateway[] {a, b, c}) {
            if (n != null) {
                n.kill();
            }
        }
    }

    private static ChildGateway node(String name, String... more) throws IOException, InterruptedException {
        return nodeOn(name, redis.url(), more);
    }

    /** A node that reaches Redis at {@code redisUrl} (through a proxy a test may cut). */
    private static ChildGateway nodeOn(String name, String redisUrl, String... more)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("--store-url", storeUrl, "--cluster-redis-url", redisUrl,
                "--node-id", name, "--cluster-lease-ms", LEASE_MS, "--cluster-stream-max", STREAM_MAX,
                "--demo-delay-ms", "5"));
        args.addAll(List.of(more));
        return ChildGateway.start(dir.resolve("data-" + name), ChildGateway.freePort(), dir.resolve(name + ".log"),
                List.of(), args.toArray(String[]::new));
    }

    private static String session() {
        return "cl-" + UUID.randomUUID();
    }

    private static List<Long> haiSeqs(List<JsonNode> frames) {
        return frames.stream().filter(f -> f.has("seq")).map(f -> f.path("seq").asLong()).toList();
    }

    private static List<Long> aguiSeqs(List<JsonNode> frames) {
        return frames.stream().filter(f -> f.path("metadata").has("seq"))
                .map(f -> f.path("metadata").path("seq").asLong()).toList();
    }

    private static Predicate<JsonNode> type(String type) {
        return f -> f.path("type").asText().equals(type);
    }

    private static boolean completed(JsonNode f) {
        return f.path("type").asText().equals("status") && f.path("status").asText().equals("completed");
    }

    /** HAI frame types, with the status of those that have one ({@code tool_call:started}). */
    private static List<String> haiTypes(List<JsonNode> frames) {
        return frames.stream().map(f -> f.path("type").asText() + (f.has("status") ? ":" + f.path("status").asText() : ""))
                .toList();
    }

    @Test
    void aRunStartedOnOneNodeStreamsToAnotherInTheSameOrderInEveryDialect() {
        String s = session();
        try (WsClient hai = WsClient.connect(a.port, "/ws")) {
            hai.ask(s, "hello").untilCompleted();
            try (WsClient haiOnB = WsClient.connect(b.port, "/hai/ws?session_id=" + s);
                 WsClient agui = WsClient.connect(b.port, "/agui/ws?threadId=" + s)) {
                List<JsonNode> onB = agui.send(input(s, "what are the rules for food storage?").toString())
                        .until(type("RUN_FINISHED"));
                List<JsonNode> onA = hai.untilCompleted();
                List<Long> aguiSeqs = aguiSeqs(onB);
                assertThat(aguiSeqs).as("node b shows the run it runs, in order").isNotEmpty().isSorted()
                        .doesNotHaveDuplicates();
                assertThat(haiSeqs(onA)).as("node a shows the run node b runs, as a HAI client on node b sees it")
                        .isEqualTo(haiSeqs(haiOnB.untilCompleted()))
                        .isSubsetOf(aguiSeqs).isSorted();
                assertThat(haiSeqs(onA).get(haiSeqs(onA).size() - 1)).as("the run's last event")
                        .isEqualTo(aguiSeqs.get(aguiSeqs.size() - 1));
                assertThat(onA.stream().filter(type("assistant_message_chunk")).count()).isPositive();
            }
        }
    }

    @Test
    void aCursorFromOneNodeResumesOnAnotherWithEveryLaterEventOnceInOrder() {
        String s = session();
        long cursor;
        List<Long> seenBefore;
        try (WsClient first = WsClient.connect(a.port, "/ws")) {
            List<JsonNode> some = first.ask(s, "a slow answer please").until(type("assistant_message_chunk"));
            some.addAll(first.until(type("assistant_message_chunk")));
            seenBefore = haiSeqs(some);
            cursor = seenBefore.get(seenBefore.size() - 1);
        }
        try (WsClient back = WsClient.connect(c.port, "/hai/ws?session_id=" + s + "&last_seq=" + cursor)) {
            List<JsonNode> rest = back.untilCompleted();
            List<Long> seqs = haiSeqs(rest);
            assertThat(seqs.get(0)).as("the event after the cursor comes first").isEqualTo(cursor + 1);
            assertThat(seqs).as("once each, in order").isSorted().doesNotHaveDuplicates();
            for (int i = 1; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).as("no gap").isEqualTo(seqs.get(i - 1) + 1);
            }
        }
    }

    @Test
    void aClientThatMovesBeforeItsNewConversationIsStoredResumesOnAnotherNode() throws Exception {
        String s = session();
        long cursor;
        try (Connection db = postgres.connect(storeUrl)) {
            db.setAutoCommit(false);
            // Every node's store writer waits for this lock: the new conversation streams, unstored.
            db.createStatement().execute("LOCK TABLE conversations IN EXCLUSIVE MODE");
            try (WsClient first = WsClient.connect(a.port, "/ws")) {
                List<Long> seen = haiSeqs(first.ask(s, "a slow answer please").until(type("assistant_message_chunk")));
                cursor = seen.get(seen.size() - 1);
            }
            Thread unlock = new Thread(() -> {
                try {
                    Thread.sleep(1_000);
                    db.rollback();
                } catch (InterruptedException | SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            unlock.start();
            // Node c knows the conversation from Redis only until node a stores it: it waits, never "no conversation".
            try (WsClient back = WsClient.connect(c.port, "/hai/ws?session_id=" + s + "&last_seq=" + cursor)) {
                List<JsonNode> rest = back.untilCompleted();
                assertThat(rest).as("no error").noneMatch(type("error"));
                List<Long> seqs = haiSeqs(rest);
                assertThat(seqs.get(0)).as("the event after the cursor comes first").isEqualTo(cursor + 1);
                for (int i = 1; i < seqs.size(); i++) {
                    assertThat(seqs.get(i)).as("once each, in order, no gap").isEqualTo(seqs.get(i - 1) + 1);
                }
            } finally {
                unlock.join();
            }
        }
    }

    @Test
    void aNodeThatLoadsAConversationWhoseRunOnAnotherNodeIsStoredKnowsTheRunGoesOn() throws Exception {
        String s = session();
        try (WsClient hai = WsClient.connect(b.port, "/ws")) {
            List<JsonNode> asked = hai.ask(s, "generate the report").until(type("tool_approval_request"));
            JsonNode request = asked.get(asked.size() - 1);
            List<Long> seqs = haiSeqs(asked);
            long cursor = seqs.get(seqs.size() - 1);
            // The run waits for its approval, and node b has stored all of it so far, its start too:
            // node c, which never had the conversation, reads its start from the store, not from Redis.
            awaitStored(s, cursor);
            // Its answer's head comes with the first event to show, once the approval is answered.
            var reattaching = HTTP.sendAsync(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + c.port + "/agui/threads/" + s + "/events"))
                    .header("Last-Event-ID", Long.toString(cursor)).timeout(Duration.ofSeconds(20)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            Thread.sleep(300);
            hai.send(Json.object().put("type", "tool_approval_response")
                    .put("approval_id", request.path("approval_id").asText()).put("approved", true).toString());
            hai.untilCompleted();
            HttpResponse<InputStream> reattached = reattaching.join();
            assertThat(reattached.statusCode()).as("the run went on on node b: not \"nothing to resume\"")
                    .isEqualTo(200);
            try (InputStream body = reattached.body()) {
                List<JsonNode> rest = AguiHttp.events(new String(body.readAllBytes(), StandardCharsets.UTF_8));
                assertThat(AguiHttp.types(rest)).as("the rest of the run, on node c")
                        .containsSubsequence("TOOL_CALL_RESULT", "RUN_FINISHED");
            }
        }
    }

    @Test
    void anApprovalOfARunOnBIsAnsweredOnceFromCOverHai() {
        String s = session();
        try (WsClient hai = WsClient.connect(c.port, "/ws")) {
            hai.ask(s, "hello").untilCompleted();
            try (WsClient agui = WsClient.connect(b.port, "/agui/ws?threadId=" + s, "ag-ui")) {
                agui.send(input(s, "generate the report").toString());
                JsonNode request = hai.until(type("tool_approval_request")).stream().reduce((x, y) -> y).orElseThrow();
                assertThat(request.path("tool_name").asText()).isEqualTo("generate_inspection_report");
                ObjectNode answer = Json.object().put("type", "tool_approval_response")
                        .put("approval_id", request.path("approval_id").asText()).put("approved", true)
                        .put("feedback", "approved on node c");
                hai.send(answer.toString());
                List<JsonNode> rest = hai.untilCompleted();
                assertThat(haiTypes(rest)).as("node b ran the tool once node c's decision reached it")
                        .containsSubsequence("tool_call:started", "tool_call:completed");
                List<JsonNode> onB = agui.until(type("RUN_FINISHED"));
                assertThat(onB.stream().map(f -> f.path("type").asText())).contains("TOOL_CALL_RESULT");
                JsonNode again = hai.send(answer.put("approved", false).toString()).until(type("error")).get(0);
                assertThat(again.path("message").asText()).as(again.toString()).contains("already decided");
            }
        }
    }

    @Test
    void anApprovalOfARunOnBIsAnsweredByTheAguiResumeOnA() throws Exception {
        String thread = session();
        List<JsonNode> first = AguiHttp.run(b.port, input(thread, "report"));
        JsonNode end = first.get(first.size() - 1);
        assertThat(end.path("outcome").path("type").asText()).as(end.toString()).isEqualTo("interrupt");
        String interruptId = end.path("outcome").path("interrupts").get(0).path("id").asText();
        ObjectNode resume = Json.object().put("threadId", thread).put("runId", UUID.randomUUID().toString());
        resume.putArray("messages");
        resume.putArray("resume").addObject().put("interruptId", interruptId).put("status", "resolved")
                .putObject("payload").put("approved", true);
        List<JsonNode> events = AguiHttp.run(a.port, resume);
        assertThat(AguiHttp.types(events)).as("node b continued the run with node a's answer")
                .contains("TOOL_CALL_RESULT");
        assertThat(events.get(events.size() - 1).path("outcome").path("type").asText()).isEqualTo("success");
    }

    @Test
    void anApprovalOfARunOnBIsAnsweredOnceThroughA2hOnC() throws Exception {
        String s = session();
        try (WsClient hai = WsClient.connect(b.port, "/ws")) {
            String approvalId = hai.ask(s, "generate the report").until(type("tool_approval_request")).stream()
                    .reduce((x, y) -> y).orElseThrow().path("approval_id").asText();
            HttpResponse<String> decided = a2hRespond(c, approvalId, true);
            assertThat(decided.statusCode()).as(decided.body()).isEqualTo(200);
            List<JsonNode> rest = hai.untilCompleted();
            assertThat(haiTypes(rest)).containsSubsequence("tool_call:started", "tool_call:completed");
            HttpResponse<String> twice = a2hRespond(a, approvalId, false);
            assertThat(twice.statusCode()).as(twice.body()).isEqualTo(409);
        }
    }

    @Test
    void anA2hRequestIntoAConversationWhoseRunStreamsOnBIsShownThereAtOnceAndAnsweredFromC() throws Exception {
        String s = session();
        String callId = "call-" + UUID.randomUUID();
        try (WsClient hai = WsClient.connect(b.port, "/ws")) {
            hai.ask(s, "a slow answer please").until(type("assistant_message_chunk"));
            HttpResponse<String> created = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.port
                                    + "/humanlayer/v1/function_calls"))
                            .header("Content-Type", "application/json").timeout(Duration.ofSeconds(20))
                            .POST(HttpRequest.BodyPublishers.ofString(A2hServerTest.functionCall(callId, "send_email",
                                    A2hServerTest.session(s)).toString())).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(created.statusCode()).as("asked on a while b runs the conversation: " + created.body())
                    .isEqualTo(201);
            List<JsonNode> untilAsked = hai.until(type("tool_approval_request"));
            JsonNode request = untilAsked.get(untilAsked.size() - 1);
            assertThat(request.path("tool_name").asText()).isEqualTo("send_email");
            assertThat(haiTypes(untilAsked)).as("shown while the run streams").doesNotContain("status:completed");

            HttpResponse<String> decided = a2hRespond(c, callId, true);
            assertThat(decided.statusCode()).as(decided.body()).isEqualTo(200);
            assertThat(Json.MAPPER.readTree(decided.body()).path("status").path("approved").asBoolean())
                    .as(decided.body()).isTrue();
            assertThat(haiSeqs(hai.untilCompleted())).isSorted().doesNotHaveDuplicates();
            HttpResponse<String> twice = a2hRespond(a, callId, false);
            assertThat(twice.statusCode()).as(twice.body()).isEqualTo(409);
        }
    }

    @Test
    void anApprovalRequestedOnBIsPendingOnAThoughBHasNotStoredItYet() throws Exception {
        String s = session();
        try (WsClient runner = WsClient.connect(b.port, "/ws")) {
            runner.ask(s, "hello").untilCompleted();
            WsClient watcher = WsClient.connect(a.port, "/hai/ws?session_id=" + s);
            List<JsonNode> asked;
            String approvalId;
            try (Connection db = postgres.connect(storeUrl)) {
                db.setAutoCommit(false);
                // Node b cannot store the request while this lock holds; it publishes it all the same.
                db.createStatement().execute("LOCK TABLE approvals IN EXCLUSIVE MODE");
                asked = runner.ask(s, "generate the report").until(type("tool_approval_request"));
                approvalId = asked.get(asked.size() - 1).path("approval_id").asText();
                watcher.until(f -> approvalId.equals(f.path("approval_id").asText()));
                assertThat(a2hPending(a)).as("heard from b, not in the store yet").contains(approvalId);
                assertThat(a2hPending(a)).as("listed once").containsOnlyOnce(approvalId);
                db.rollback();
            }
            assertThat(a2hPending(a)).as("stored by b now, listed once").containsOnlyOnce(approvalId);
            A2hServerTest.answer(runner, asked.get(asked.size() - 1), true, "on b");
            runner.untilCompleted();
            watcher.untilCompleted();
            assertThat(a2hPending(a)).as("decided").doesNotContain(approvalId);
            watcher.close();
        }
    }

    @Test
    void anApprovalDecidedOnBLeavesThePendingListOfAAtOnceThoughBHasNotStoredItYet() throws Exception {
        String s = session();
        try (WsClient runner = WsClient.connect(b.port, "/ws")) {
            runner.ask(s, "hello").untilCompleted();
            WsClient watcher = WsClient.connect(a.port, "/hai/ws?session_id=" + s);
            List<JsonNode> asked = runner.ask(s, "generate the report").until(type("tool_approval_request"));
            String approvalId = asked.get(asked.size() - 1).path("approval_id").asText();
            watcher.until(f -> approvalId.equals(f.path("approval_id").asText()));
            assertThat(a2hPending(a)).as("pending, stored or heard from b").contains(approvalId);
            try (Connection db = postgres.connect(storeUrl)) {
                db.setAutoCommit(false);
                // Node b cannot store the decision while this lock holds.
                db.createStatement().execute("LOCK TABLE approvals IN EXCLUSIVE MODE");
                A2hServerTest.answer(runner, asked.get(asked.size() - 1), true, "on b");
                watcher.until(type("tool_call").and(f -> f.path("status").asText().equals("started")));
                assertThat(a2hPending(a)).as("node a heard the decision; the store still says pending")
                        .doesNotContain(approvalId);
                db.rollback();
            }
            runner.untilCompleted();
            watcher.close();
        }
    }

    /** The approval ids a node's A2H pending list shows. */
    private static List<String> a2hPending(ChildGateway node) throws IOException, InterruptedException {
        HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port
                        + "/humanlayer/v1/agent/function_calls/pending?limit=1000")).timeout(Duration.ofSeconds(20))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(res.statusCode()).as(res.body()).isEqualTo(200);
        List<String> ids = new ArrayList<>();
        Json.MAPPER.readTree(res.body()).path("items").forEach(i -> ids.add(i.path("call_id").asText()));
        return ids;
    }

    private static HttpResponse<String> a2hRespond(ChildGateway node, String approvalId, boolean approved)
            throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port
                                + "/humanlayer/v1/agent/function_calls/" + approvalId + "/respond"))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(20))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"approved\":" + approved + "}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aCursorOlderThanTheRedisStreamIsServedFromPostgres() {
        String s = session();
        List<Long> all;
        try (WsClient first = WsClient.connect(a.port, "/ws")) {
            all = haiSeqs(first.ask(s, "a slow answer please").untilCompleted());
        }
        assertThat(all.size()).as("more events than the stream keeps").isGreaterThan(Integer.parseInt(STREAM_MAX));
        long cursor = all.get(1);
        try (WsClient back = WsClient.connect(b.port, "/hai/ws?session_id=" + s + "&last_seq=" + cursor)) {
            List<Long> rest = haiSeqs(back.untilCompleted());
            assertThat(rest).as("every event after the cursor, once, in order, the first ones from PostgreSQL")
                    .isEqualTo(all.subList(2, all.size()));
        }
    }

    @Test
    void aRedisThatLostEverythingLeadsToAFullResyncNeverAGapOrAReusedSeq() throws Exception {
        String s = session();
        List<Long> before;
        try (WsClient first = WsClient.connect(a.port, "/ws")) {
            before = haiSeqs(first.ask(s, "hello").untilCompleted());
        }
        redis.restart();
        // Past the nodes' next health check, which must find Redis again.
        Thread.sleep(HEALTH_CHECK_EVERY.toMillis() + 500);
        for (ChildGateway n : new ChildGateway[] {a, b, c}) {
            awaitClusterHealthy(n);
        }
        long cursor = before.get(0);
        try (WsClient back = WsClient.connect(b.port, "/hai/ws?session_id=" + s + "&last_seq=" + cursor)) {
            assertThat(haiSeqs(back.untilCompleted())).as("the rest of the run, from PostgreSQL")
                    .isEqualTo(before.subList(1, before.size()));
            List<Long> next = haiSeqs(back.ask(s, "hello again").untilCompleted());
            assertThat(next).isSorted().doesNotHaveDuplicates();
            assertThat(next.get(0)).as("a new run never reuses a seq a client may hold")
                    .isGreaterThan(before.get(before.size() - 1));
        }
    }

    private static void awaitClusterHealthy(ChildGateway node) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port
                    + "/healthz")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            if (res.statusCode() == 200) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("node did not see Redis again: " + res.body());
            }
            Thread.sleep(200);
        }
    }

    @Test
    void oneRunAtATimePerConversationAcrossTheCluster() {
        String s = session();
        try (WsClient hai = WsClient.connect(a.port, "/ws")) {
            hai.ask(s, "a slow answer please").until(type("assistant_message_chunk"));
            try (WsClient other = WsClient.connect(c.port, "/ws")) {
                // Refused, after the run going on from its start (a client that asks meanwhile sees it).
                List<JsonNode> frames = other.ask(s, "and another thing").until(type("error"));
                JsonNode refused = frames.get(frames.size() - 1);
                assertThat(refused.path("error_code").asText()).as(refused.toString()).isEqualTo("run_in_progress");
            }
            hai.untilCompleted();
        }
    }

    @Test
    void aNodeKilledMidRunHasItsRunFailedElsewhereAndTheConversationGoesOn() throws Exception {
        ChildGateway doomed = node("doomed");
        String s = session();
        try (WsClient watcher = WsClient.connect(a.port, "/ws")) {
            List<Long> hello = haiSeqs(watcher.ask(s, "hello").untilCompleted());
            // The store writes behind the stream, and a writer lets the conversation go once its run is
            // stored: the first run must be stored before the table is locked, or no other node may run.
            awaitStored(s, hello.get(hello.size() - 1));
            List<JsonNode> seen = new ArrayList<>();
            // The table locked, the killed node cannot store what it shows: the node that takes over must.
            try (Connection db = postgres.connect(storeUrl); WsClient runner = WsClient.connect(doomed.port, "/ws")) {
                db.setAutoCommit(false);
                db.createStatement().execute("LOCK TABLE events IN EXCLUSIVE MODE");
                runner.ask(s, "generate the report");
                seen.addAll(watcher.until(type("tool_approval_request")));
                doomed.kill();
                db.rollback();
            }
            List<JsonNode> untilFailed = untilFailedUnavailable(watcher);
            long failedSeq = untilFailed.get(untilFailed.size() - 1).path("seq").asLong();
            assertThat(haiSeqs(untilFailed)).as("the killed node's events, then the failure above them")
                    .isSorted().doesNotHaveDuplicates().allMatch(seq -> seq > haiSeqs(seen).get(haiSeqs(seen).size() - 1));

            // The take-over fails the run without waiting for its store writer to store what it adopted
            // (ClusterLink.adopt): the failure may reach the watcher first.
            awaitStored(s, haiSeqs(seen).get(haiSeqs(seen).size() - 1));
            assertThat(storedSeqs(s)).as("every event the watcher saw is stored, though its node died before it stored them")
                    .containsAll(haiSeqs(seen));

            // What the watcher saw is kept as it saw it: a client resuming from its first cursor gets it again.
            long firstSeen = haiSeqs(seen).get(0);
            try (WsClient replay = WsClient.connect(c.port, "/hai/ws?session_id=" + s + "&last_seq=" + (firstSeen - 1))) {
                List<JsonNode> again = replay.until(type("error"));
                assertThat(haiSeqs(again)).as("nothing seen is lost or renumbered")
                        .startsWith(haiSeqs(seen).toArray(Long[]::new));
            }

            // The approval the killed node's run asked for is still pending: answered, the work goes on here.
            String approvalId = seen.get(seen.size() - 1).path("approval_id").asText();
            watcher.send(Json.object().put("type", "tool_approval_response").put("approval_id", approvalId)
                    .put("approved", true).put("feedback", "after the node died").toString());
            List<JsonNode> continued = watcher.untilCompleted();
            assertThat(haiTypes(continued)).containsSubsequence("tool_call:started", "tool_call:completed");
            assertThat(haiSeqs(continued)).isSorted().doesNotHaveDuplicates()
                    .allMatch(seq -> seq > failedSeq);
        }
    }

    @Test
    void whatANodeCutOffFromRedisStoredBeforeItDiedReachesEveryNodeAndItsRunFailsOnceAfterIt() throws Exception {
        try (FreezableProxy link = FreezableProxy.to(redis.port())) {
            ChildGateway doomed = nodeOn("cut-off", "redis://127.0.0.1:" + link.port());
            String s = session();
            try (WsClient watcher = WsClient.connect(a.port, "/ws")) {
                watcher.ask(s, "hello").untilCompleted();
                List<JsonNode> ran = new ArrayList<>();
                List<JsonNode> watched = new ArrayList<>();
                try (WsClient runner = WsClient.connect(doomed.port, "/ws")) {
                    runner.ask(s, "a slow answer please");
                    ran.addAll(runner.until(type("assistant_message_chunk")));
                    watched.addAll(watcher.until(type("assistant_message_chunk")));
                    link.freeze();
                    // Cut off from Redis (its lease not yet lapsed), the node goes on: it shows its
                    // client what its run emits and stores it, and nothing of it reaches the cluster.
                    for (int i = 0; i < 5; i++) {
                        ran.addAll(runner.until(type("assistant_message_chunk")));
                    }
                    List<Long> ranSeqs = haiSeqs(ran);
                    awaitStored(s, ranSeqs.get(ranSeqs.size() - 1));
                    doomed.kill();
                }
                List<Long> ranSeqs = haiSeqs(ran);
                long lastRan = ranSeqs.get(ranSeqs.size() - 1);
                watched.addAll(untilFailedUnavailable(watcher));
                assertThat(haiSeqs(watched)).as("the watcher's events: every one the cut-off node showed, then the failure")
                        .isSorted().doesNotHaveDuplicates().containsAll(ranSeqs);
                assertThat(watched.get(watched.size() - 1).path("seq").asLong()).isGreaterThan(lastRan);

                // A client of the dead node resumes on another with the last cursor it was given.
                try (WsClient back = WsClient.connect(c.port, "/hai/ws?session_id=" + s + "&last_seq=" + lastRan)) {
                    List<JsonNode> after = untilFailedUnavailable(back);
                    assertThat(haiSeqs(after)).as("only what followed the cursor: no resync, no gap")
                            .isNotEmpty().allMatch(seq -> seq > lastRan);
                    assertThat(haiTypes(after)).doesNotContain("assistant_message_chunk");
                }
                assertThat(runEnds(s)).as("two runs stored, one end each").isEqualTo(2);
            }
        }
    }

    @Test
    void aNodeCutOffFromRedisThatGoesOnWritingStoresNothingAfterTheNodeThatTookItsConversationOver()
            throws Exception {
        try (FreezableProxy link = FreezableProxy.to(redis.port())) {
            ChildGateway cutOff = nodeOn("cut-off-alive", "redis://127.0.0.1:" + link.port());
            try {
                String s = session();
                try (WsClient watcher = WsClient.connect(b.port, "/ws");
                     WsClient runner = WsClient.connect(cutOff.port, "/ws")) {
                    watcher.ask(s, "hello").untilCompleted();
                    runner.ask(s, "a slow answer please");
                    runner.until(type("assistant_message_chunk"));
                    watcher.until(type("assistant_message_chunk"));
                    link.freeze();
                    // Alive, cut off from Redis, its run going on for seconds after its lease lapses
                    // and another node fails the run: it must store nothing from then on.
                    List<JsonNode> watched = untilFailedUnavailable(watcher);
                    long failedSeq = watched.get(watched.size() - 1).path("seq").asLong();
                    runner.drain(Duration.ofMillis(1500));

                    List<Long> stored = storedSeqs(s);
                    assertThat(stored).as("what the cluster's clients saw is stored, and nothing after the failure")
                            .containsAll(haiSeqs(watched)).allMatch(seq -> seq <= failedSeq);
                    assertThat(runEnds(s)).as("two runs stored, one end each").isEqualTo(2);

                    List<JsonNode> next = watcher.ask(s, "hello").untilCompleted();
                    assertThat(haiSeqs(next)).isNotEmpty().allMatch(seq -> seq > failedSeq);
                    awaitStored(s, haiSeqs(next).get(haiSeqs(next).size() - 1));
                    assertThat(storedSeqs(s)).as("the conversation goes on, stored").doesNotHaveDuplicates()
                            .containsAll(haiSeqs(next));
                }
            } finally {
                cutOff.kill();
            }
        }
    }

    @Test
    void aNodeKilledAfterItsRunEndedAndBeforeItStoredItLosesNothing() throws Exception {
        ChildGateway doomed = node("store-behind");
        String s = session();
        List<Long> shown;
        try (WsClient runner = WsClient.connect(doomed.port, "/ws")) {
            List<Long> first = haiSeqs(runner.ask(s, "hello").untilCompleted());
            awaitStored(s, first.get(first.size() - 1));
            // From the first run's last seq: a live join counts from when node a handles it, which the
            // run below may beat on a node that has served nothing yet; a cursor misses nothing after it.
            try (Connection db = postgres.connect(storeUrl);
                 WsClient watcher = WsClient.connect(a.port, "/hai/ws?session_id=" + s + "&last_seq="
                         + first.get(first.size() - 1))) {
                db.setAutoCommit(false);
                // The node's store writer waits for this lock: the run ends, published, and unstored.
                db.createStatement().execute("LOCK TABLE events IN EXCLUSIVE MODE");
                shown = haiSeqs(runner.ask(s, "hello").untilCompleted());
                // Node a has the run's end from Redis: everything the runner saw was published.
                long end = shown.get(shown.size() - 1);
                watcher.until(f -> f.path("seq").asLong() == end);
                doomed.kill();
                db.rollback();
            }
        } finally {
            doomed.kill();
        }
        awaitStored(s, shown.get(shown.size() - 1));
        assertThat(storedSeqs(s)).as("every event its client saw, stored by the node that took over")
                .containsAll(shown);
        try (WsClient next = WsClient.connect(a.port, "/ws")) {
            List<Long> after = haiSeqs(next.ask(s, "hello").untilCompleted());
            assertThat(after).isNotEmpty().allMatch(seq -> seq > shown.get(shown.size() - 1));
        }
    }

    /**
     * A HAI client's frames up to its run's failure with {@code unavailable}: the error, then the
     * status that ends the run and carries the failure's cursor (the last frame returned).
     */
    private static List<JsonNode> untilFailedUnavailable(WsClient client) {
        List<JsonNode> frames = client.until(type("error"));
        JsonNode failed = frames.get(frames.size() - 1);
        assertThat(failed.path("error_code").asText()).as(failed.toString()).isEqualTo("service_unavailable");
        JsonNode end = client.next();
        assertThat(completed(end)).as(end.toString()).isTrue();
        frames.add(end);
        return frames;
    }

    /** Waits until PostgreSQL holds the conversation's event {@code seq}. */
    private static void awaitStored(String conversationId, long seq) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!storedSeqs(conversationId).contains(seq)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("event " + seq + " of " + conversationId + " was not stored");
            }
            Thread.sleep(20);
        }
    }

    /** How many of the conversation's stored events end a run (finished or failed). */
    private static int runEnds(String conversationId) throws SQLException {
        try (Connection db = postgres.connect(storeUrl);
             PreparedStatement q = db.prepareStatement("SELECT count(*) FROM events WHERE conversation_id = ?"
                     + " AND kind IN ('RUN_FINISHED', 'RUN_FAILED')")) {
            q.setString(1, conversationId);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static List<Long> storedSeqs(String conversationId) throws SQLException {
        try (Connection db = postgres.connect(storeUrl);
             PreparedStatement q = db.prepareStatement("SELECT seq FROM events WHERE conversation_id = ? ORDER BY seq")) {
            q.setString(1, conversationId);
            List<Long> seqs = new ArrayList<>();
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    seqs.add(rs.getLong(1));
                }
            }
            return seqs;
        }
    }

    @Test
    void aClientsConnectionLimitHoldsAcrossNodes() throws Exception {
        ChildGateway one = node("limited-1", "--max-connections-per-client", "2", "--jwt-secret", AuthServerTest.SECRET);
        ChildGateway two = node("limited-2", "--max-connections-per-client", "2", "--jwt-secret", AuthServerTest.SECRET);
        // A client of its own: the other tests' connections, anonymous, count under their address.
        String ws = "/ws?token=" + AuthServerTest.hs256("limited-" + UUID.randomUUID(), Instant.now().plusSeconds(600));
        try (WsClient first = WsClient.connect(one.port, ws); WsClient second = WsClient.connect(two.port, ws)) {
            for (ChildGateway n : List.of(one, two)) {
                Throwable t = catchThrowable(() -> WsClient.connect(n.port, ws).close());
                assertThat(t).as("a third connection, on either node").hasCauseInstanceOf(WebSocketHandshakeException.class);
                assertThat(((WebSocketHandshakeException) t.getCause()).getResponse().statusCode()).isEqualTo(429);
            }
            second.close();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (true) {
                try (WsClient again = WsClient.connect(one.port, ws)) {
                    break;
                } catch (RuntimeException stillCounted) {
                    assertThat(System.nanoTime()).as("the place closed on node 2 is free on node 1").isLessThan(deadline);
                    Thread.sleep(50);
                }
            }
        } finally {
            one.kill();
            two.kill();
        }
    }

    @Test
    void healthSaysWhichNodeAnswersAndThatTheClusterServes() throws Exception {
        HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + b.port + "/healthz"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(res.statusCode()).isEqualTo(200);
        JsonNode health = Json.MAPPER.readTree(res.body());
        assertThat(health.path("node").asText()).isEqualTo("b");
        assertThat(health.path("cluster").asText()).isEqualTo("ok");
        assertThat(health.path("store").asText()).isEqualTo("ok");
    }

    @Test
    void aClusterOnTheDefaultSqliteStoreStopsStartUpSayingWhy() throws Exception {
        ChildGateway.Exit exit = ChildGateway.run(Map.of(), "--port", "0", "--data-dir",
                dir.resolve("sqlite").toString(), "--cluster-redis-url", redis.url());
        assertThat(exit.code()).isEqualTo(2);
        assertThat(exit.output()).contains("needs a store every node shares").contains("--store-url");
    }
}
