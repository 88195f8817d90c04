package dev.switchboard.server;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The A2H / HumanLayer REST side over real HTTP: every endpoint, every refusal, both ways of
 * authenticating, and calls answered by people on HAI connections, through {@code respond},
 * and after a restart.
 */
class A2hServerTest {
    static final String KEY = "a2h-test-key-1";
    static final String OTHER_KEY = "a2h-test-key-2";
    static final String HL = "/humanlayer/v1";
    static final String A2H = "/a2h/v1";
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dataDir;
    static TestGateway gateway;

    @BeforeAll
    static void start() {
        gateway = keyed(dataDir.resolve("shared"));
    }

    @AfterAll
    static void stop() {
        gateway.close();
    }

    static TestGateway keyed(Path dir) {
        return TestGateway.start(dir, Map.of("a2h-api-key", KEY + "\n" + OTHER_KEY));
    }

    record Res(int status, JsonNode body, HttpResponse<String> raw) {
    }

    static Res send(TestGateway g, String method, String path, String body, String key) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port() + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            b.header("Authorization", "Bearer " + key);
        }
        HttpResponse<String> res = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json = res.body().isEmpty() ? Json.MAPPER.missingNode() : Json.MAPPER.readTree(res.body());
        return new Res(res.statusCode(), json, res);
    }

    static Res get(TestGateway g, String path) throws Exception {
        return send(g, "GET", path, null, KEY);
    }

    static Res post(TestGateway g, String path, Object body) throws Exception {
        return send(g, "POST", path, body.toString(), KEY);
    }

    static Res get(String path) throws Exception {
        return get(gateway, path);
    }

    static Res post(String path, Object body) throws Exception {
        return post(gateway, path, body);
    }

    static String id(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    static ObjectNode session(String conversation) {
        ObjectNode channel = Json.object();
        channel.putObject("session").put("session_id", conversation);
        return channel;
    }

    static ObjectNode functionCall(String callId, String fn, ObjectNode channel) {
        ObjectNode call = Json.object().put("run_id", "run-" + callId).put("call_id", callId);
        ObjectNode spec = call.putObject("spec").put("fn", fn);
        spec.putObject("kwargs").put("to", "ap@example.com").put("amount", 100);
        if (channel != null) {
            spec.set("channel", channel);
        }
        return call;
    }

    static ObjectNode contact(String callId, String msg, ObjectNode channel) {
        ObjectNode call = Json.object().put("run_id", "run-" + callId).put("call_id", callId);
        ObjectNode spec = call.putObject("spec").put("msg", msg);
        if (channel != null) {
            spec.set("channel", channel);
        }
        return call;
    }

    /** GETs {@code path} until its body matches, for a decision made elsewhere (HAI) to be reported. */
    static JsonNode await(TestGateway g, String path, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + WsClient.WAIT.toNanos();
        while (true) {
            Res r = get(g, path);
            assertThat(r.status()).as(r.body().toString()).isEqualTo(200);
            if (done.test(r.body())) {
                return r.body();
            }
            assertThat(System.nanoTime()).as("%s did not change in time: %s", path, r.body()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    static JsonNode decided(TestGateway g, String path) throws Exception {
        return await(g, path, b -> b.path("status").has("responded_at")).path("status");
    }

    /** Joins a conversation over HAI as a person does: by sending a message in it. */
    static WsClient join(TestGateway g, String conversation) {
        WsClient hai = g.connect("/hai/ws");
        hai.ask(conversation, "hello");
        return hai;
    }

    static JsonNode approvalRequest(WsClient hai) {
        List<JsonNode> frames = hai.until(f -> f.path("type").asText().equals("tool_approval_request"));
        return frames.get(frames.size() - 1);
    }

    static void answer(WsClient hai, JsonNode request, boolean approved, String feedback) {
        ObjectNode r = Json.object().put("type", "tool_approval_response")
                .put("approval_id", request.path("approval_id").asText()).put("approved", approved);
        if (feedback != null) {
            r.put("feedback", feedback);
        }
        hai.send(r.toString());
    }

    static void assertError(Res r, int status, String code, String field) {
        assertThat(r.status()).as(r.body().toString()).isEqualTo(status);
        assertThat(r.body().path("error").path("code").asText()).as(r.body().toString()).isEqualTo(code);
        assertThat(r.body().path("error").path("message").asText()).isNotBlank();
        if (field != null) {
            assertThat(r.body().at("/error/details/field").asText()).as(r.body().toString()).isEqualTo(field);
        }
    }

    // ---- create and read -------------------------------------------------------------------

    @Test
    void aFunctionCallIsStoredWithTheServersRequestTimeIgnoringTheClientsStatusAndReadUnderBothPrefixes()
            throws Exception {
        String callId = id("call");
        ObjectNode call = functionCall(callId, "send_email", session(id("s")));
        call.putObject("status").put("approved", true).put("requested_at", "2000-01-01T00:00:00Z");
        Instant before = Instant.now().minusSeconds(1);
        Res created = post(HL + "/function_calls", call);
        assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
        call.remove("status");
        JsonNode body = created.body();
        assertThat(body.path("run_id")).isEqualTo(call.get("run_id"));
        assertThat(body.path("call_id").asText()).isEqualTo(callId);
        assertThat(body.path("spec")).isEqualTo(call.get("spec"));
        assertThat(body.path("status").has("approved")).isFalse();
        assertThat(Instant.parse(body.at("/status/requested_at").asText())).isAfter(before);
        assertThat(get(HL + "/function_calls/" + callId).body()).isEqualTo(body);
        assertThat(get(A2H + "/function_calls/" + callId).body()).isEqualTo(body);
    }

    @Test
    void aFunctionCallWithoutKwargsOrChannelGetsEmptyKwargsAndNullFieldsCountAsAbsent() throws Exception {
        String callId = id("call");
        ObjectNode call = Json.object().put("run_id", "r").put("call_id", callId);
        call.putObject("spec").put("fn", "ping").putNull("channel").putNull("state").putNull("reject_options");
        Res created = post(HL + "/function_calls", call);
        assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
        assertThat(created.body().path("spec").toString()).isEqualTo("{\"fn\":\"ping\",\"kwargs\":{}}");
    }

    @Test
    void repostingTheSameCallIsIdempotentAndADifferentOneWithItsCallIdGets409() throws Exception {
        String conversation = id("s");
        String callId = id("call");
        ObjectNode call = functionCall(callId, "send_email", session(conversation));
        Res first = post(HL + "/function_calls", call);
        Res again = post(A2H + "/function_calls", call);
        assertThat(first.status()).isEqualTo(201);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(gateway.server.hub().store().pendingApprovals(conversation)).hasSize(1);

        ObjectNode other = functionCall(callId, "delete_everything", session(conversation));
        assertError(post(HL + "/function_calls", other), 409, "call_id_in_use", "call_id");
        assertThat(get(HL + "/function_calls/" + callId).body()).isEqualTo(first.body());

        String contactId = id("contact");
        ObjectNode question = contact(contactId, "Which account?", session(conversation));
        assertThat(post(HL + "/contact_requests", question).status()).isEqualTo(201);
        assertThat(post(HL + "/human_contacts", question).status()).isEqualTo(200);
        assertError(post(HL + "/contact_requests", contact(contactId, "Something else?", null)), 409,
                "call_id_in_use", "call_id");
        assertThat(gateway.server.hub().store().pendingApprovals(conversation)).hasSize(2);
    }

    // ---- people on HAI ---------------------------------------------------------------------

    @Test
    void aPersonOnHaiApprovesAFunctionCallForTheirSessionWithACommentAndTheStatusSaysSo() throws Exception {
        String conversation = id("s");
        String callId = id("call");
        try (WsClient hai = join(gateway, conversation)) {
            hai.untilCompleted();
            post(HL + "/function_calls", functionCall(callId, "send_email", session(conversation)));
            JsonNode request = approvalRequest(hai);
            assertThat(request.path("tool_name").asText()).isEqualTo("send_email");
            assertThat(request.path("parameters").path("to").asText()).isEqualTo("ap@example.com");
            assertThat(request.path("session_id").asText()).isEqualTo(conversation);
            assertThat(request.path("tool_description").asText()).contains("send_email");
            answer(hai, request, true, "looks right");
            JsonNode status = decided(gateway, HL + "/function_calls/" + callId);
            assertThat(status.path("approved").asBoolean()).isTrue();
            assertThat(status.path("comment").asText()).isEqualTo("looks right");
            assertThat(status.path("user_info").path("id").asText()).isEqualTo("anonymous");
            assertThat(Instant.parse(status.path("responded_at").asText()))
                    .isAfterOrEqualTo(Instant.parse(status.path("requested_at").asText()));
        }
        assertError(post(HL + "/agent/function_calls/" + callId + "/respond",
                Json.object().put("approved", false)), 409, "already_decided", null);
    }

    @Test
    void aCallQueuedBeforeAnyoneIsConnectedIsShownToThePersonWhoJoinsAndTheirRejectionIsReported()
            throws Exception {
        String conversation = id("s");
        String callId = id("call");
        assertThat(post(HL + "/function_calls", functionCall(callId, "wire_money", session(conversation))).status())
                .isEqualTo(201);
        try (WsClient hai = join(gateway, conversation)) {
            JsonNode request = approvalRequest(hai);
            assertThat(request.path("tool_name").asText()).isEqualTo("wire_money");
            answer(hai, request, false, "not this week");
            JsonNode status = decided(gateway, HL + "/function_calls/" + callId);
            assertThat(status.path("approved").asBoolean()).isFalse();
            assertThat(status.path("comment").asText()).isEqualTo("not this week");
        }
    }

    @Test
    void aContactRequestIsAQuestionOnHaiAndThePersonsFeedbackIsItsResponse() throws Exception {
        String conversation = id("s");
        String callId = id("contact");
        ObjectNode question = contact(callId, "Which cost centre should I bill?", session(conversation));
        ((ObjectNode) question.get("spec")).put("subject", "Billing");
        assertThat(post(HL + "/human_contacts", question).status()).isEqualTo(201);
        try (WsClient hai = join(gateway, conversation)) {
            JsonNode request = approvalRequest(hai);
            assertThat(request.path("tool_name").asText()).isEqualTo("human_contact");
            assertThat(request.path("tool_description").asText()).isEqualTo("Which cost centre should I bill?");
            assertThat(request.path("reasoning").asText()).isEqualTo("Billing");
            answer(hai, request, true, "CC-42");
            JsonNode status = decided(gateway, HL + "/contact_requests/" + callId);
            assertThat(status.path("response").asText()).isEqualTo("CC-42");
            assertThat(get(HL + "/human_contacts/" + callId).body().path("status")).isEqualTo(status);
        }
    }

    @Test
    void aPersonOnAnAgUiWebSocketAnswersAFunctionCallForTheirThread() throws Exception {
        String thread = id("thread");
        String callId = id("call");
        try (WsClient agui = gateway.connect("/agui/ws")) {
            ObjectNode input = Json.object().put("threadId", thread).put("runId", id("run"));
            input.putArray("messages").addObject().put("id", id("msg")).put("role", "user").put("content", "hello");
            agui.send(input.toString()).until(e -> e.path("type").asText().equals("RUN_FINISHED"));
            post(HL + "/function_calls", functionCall(callId, "close_account", session(thread)));
            List<JsonNode> frames = agui.until(e -> e.path("type").asText().equals("CUSTOM"));
            JsonNode request = frames.get(frames.size() - 1);
            assertThat(request.path("name").asText()).isEqualTo("agora:tool_approval_request");
            assertThat(request.at("/value/toolName").asText()).isEqualTo("close_account");
            assertThat(request.at("/value/toolCallId").asText()).isEqualTo(callId);
            ObjectNode answer = Json.object().put("type", "CUSTOM").put("name", "agora:tool_approval_response");
            answer.putObject("value").put("approvalId", request.at("/value/approvalId").asText())
                    .put("approved", false).put("feedback", "keep it open");
            agui.send(answer.toString());
            JsonNode status = decided(gateway, HL + "/function_calls/" + callId);
            assertThat(status.path("approved").asBoolean()).isFalse();
            assertThat(status.path("comment").asText()).isEqualTo("keep it open");
        }
    }

    @Test
    void aContactAnsweredWithoutAReplyReportsTheDecisionAsTheResponse() throws Exception {
        String conversation = id("s");
        String callId = id("contact");
        post(HL + "/contact_requests", contact(callId, "May I go ahead?", session(conversation)));
        try (WsClient hai = join(gateway, conversation)) {
            answer(hai, approvalRequest(hai), false, null);
            assertThat(decided(gateway, HL + "/contact_requests/" + callId).path("response").asText())
                    .isEqualTo("rejected");
        }
    }

    // ---- respond and pending ---------------------------------------------------------------

    @Test
    void respondDecidesAFunctionCallOnceAndTheFirstDecisionStands() throws Exception {
        String callId = id("call");
        ObjectNode call = functionCall(callId, "send_email", null);
        ((ObjectNode) call.get("spec")).putArray("reject_options").addObject().put("name", "wrong_recipient")
                .put("title", "Wrong recipient");
        post(HL + "/function_calls", call);
        assertError(post(HL + "/agent/function_calls/" + callId + "/respond", Json.object().put("approved", false)
                .put("reject_option_name", "made_up")), 422, "validation_error", "reject_option_name");
        Res decided = post(HL + "/agent/function_calls/" + callId + "/respond", Json.object().put("approved", false)
                .put("comment", "use the billing address").put("reject_option_name", "wrong_recipient"));
        assertThat(decided.status()).as(decided.body().toString()).isEqualTo(200);
        JsonNode status = decided.body().path("status");
        assertThat(status.path("approved").asBoolean()).isFalse();
        assertThat(status.path("comment").asText()).isEqualTo("use the billing address");
        assertThat(status.path("reject_option_name").asText()).isEqualTo("wrong_recipient");
        assertThat(status.path("user_info").path("id").asText()).isEqualTo("a2h-key-1");
        assertThat(get(HL + "/function_calls/" + callId).body()).isEqualTo(decided.body());

        assertError(post(A2H + "/agent/function_calls/" + callId + "/respond", Json.object().put("approved", true)),
                409, "already_decided", null);
        assertThat(get(HL + "/function_calls/" + callId).body()).isEqualTo(decided.body());
    }

    @Test
    void respondAnswersAContactAndASecondAnswerGets409() throws Exception {
        String callId = id("contact");
        ObjectNode question = contact(callId, "Pick a colour", null);
        ((ObjectNode) question.get("spec")).putArray("response_options").addObject().put("name", "blue");
        post(HL + "/contact_requests", question);
        Res answered = post(HL + "/agent/human_contacts/" + callId + "/respond",
                Json.object().put("response", "blue it is").put("response_option_name", "blue"));
        assertThat(answered.status()).as(answered.body().toString()).isEqualTo(200);
        JsonNode status = get(HL + "/contact_requests/" + callId).body().path("status");
        assertThat(status.path("response").asText()).isEqualTo("blue it is");
        assertThat(status.path("response_option_name").asText()).isEqualTo("blue");
        assertError(post(HL + "/agent/human_contacts/" + callId + "/respond", Json.object().put("response", "red")),
                409, "already_decided", null);
    }

    @Test
    void anApprovalRaisedByAVoiceAssistRunIsAPendingFunctionCallAndRespondLetsTheRunGoOn() throws Exception {
        String conversation = id("voice");
        try (WsClient voice = gateway.connect("/api/realtime/ws?conversationId=" + conversation)) {
            voice.next();
            voice.send(Json.object().put("type", "message").put("content", "generate the inspection report").toString());
            JsonNode item = awaitPending(gateway, "function_calls",
                    i -> i.at("/spec/channel/session/session_id").asText().equals(conversation));
            String approvalId = item.path("call_id").asText();
            assertThat(gateway.server.hub().store().approval(approvalId)).isPresent();
            assertThat(item.path("run_id").asText()).isNotBlank();
            assertThat(item.at("/spec/fn").asText()).isEqualTo("generate_inspection_report");
            assertThat(item.at("/spec/kwargs").isObject()).isTrue();
            assertThat(item.at("/status/requested_at").asText()).isNotBlank();
            assertThat(get(HL + "/function_calls/" + approvalId).body()).isEqualTo(item);

            Res decided = post(HL + "/agent/function_calls/" + approvalId + "/respond",
                    Json.object().put("approved", true).put("comment", "go ahead"));
            assertThat(decided.status()).as(decided.body().toString()).isEqualTo(200);
            assertThat(decided.body().at("/status/approved").asBoolean()).isTrue();
            List<JsonNode> rest = voice.until(f -> f.path("type").asText().equals("message_complete"));
            assertThat(rest.get(rest.size() - 1).path("content").asText()).contains("was generated");
            assertThat(get(HL + "/function_calls/" + approvalId).body().at("/status/comment").asText())
                    .isEqualTo("go ahead");
        }
    }

    /** Polls a pending list until an item matches. */
    static JsonNode awaitPending(TestGateway g, String kind, Predicate<JsonNode> match) throws Exception {
        long deadline = System.nanoTime() + WsClient.WAIT.toNanos();
        while (true) {
            for (JsonNode i : get(g, HL + "/agent/" + kind + "/pending?limit=1000").body().path("items")) {
                if (match.test(i)) {
                    return i;
                }
            }
            assertThat(System.nanoTime()).as("no matching pending " + kind).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void pendingListsArePagedOldestFirstAndKeepFunctionCallsAndContactsApart() throws Exception {
        try (TestGateway g = keyed(dataDir.resolve("paging"))) {
            for (int i = 0; i < 3; i++) {
                post(g, HL + "/function_calls", functionCall("call-" + i, "f" + i, session("paging")));
            }
            post(g, HL + "/contact_requests", contact("contact-0", "Anyone there?", null));
            post(g, HL + "/agent/function_calls/call-1/respond", Json.object().put("approved", true));

            JsonNode all = get(g, HL + "/agent/function_calls/pending").body();
            assertThat(all.path("items")).extracting(i -> i.path("call_id").asText()).containsExactly("call-0", "call-2");
            assertThat(all.path("total").asInt()).isEqualTo(2);
            assertThat(all.path("limit").asInt()).isEqualTo(100);
            assertThat(all.path("offset").asInt()).isZero();
            assertThat(all.path("has_more").asBoolean()).isFalse();

            JsonNode first = get(g, HL + "/agent/function_calls/pending?limit=1").body();
            assertThat(first.path("items")).extracting(i -> i.path("call_id").asText()).containsExactly("call-0");
            assertThat(first.path("has_more").asBoolean()).isTrue();
            JsonNode second = get(g, A2H + "/agent/function_calls/pending?limit=1&offset=1").body();
            assertThat(second.path("items")).extracting(i -> i.path("call_id").asText()).containsExactly("call-2");
            assertThat(second.path("has_more").asBoolean()).isFalse();
            assertThat(get(g, HL + "/agent/function_calls/pending?offset=5").body().path("items")).isEmpty();

            JsonNode contacts = get(g, HL + "/agent/human_contacts/pending").body();
            assertThat(contacts.path("items")).extracting(i -> i.path("call_id").asText()).containsExactly("contact-0");
            assertThat(contacts.path("items").get(0).at("/spec/msg").asText()).isEqualTo("Anyone there?");
            assertThat(contacts.path("total").asInt()).isEqualTo(1);
        }
    }

    // ---- channels and humans ---------------------------------------------------------------

    @Test
    void channelsListTheirFieldsAndSayWhichTheGatewayDelivers() throws Exception {
        JsonNode body = get(A2H + "/channels").body();
        assertThat(body.at("/channels/session/session_id/type").asText()).isEqualTo("string");
        assertThat(body.at("/channels/slack/channel_or_user_id/type").asText()).isEqualTo("string");
        assertThat(body.at("/channels/email/address/type").asText()).isEqualTo("string");
        assertThat(body.path("deliverable").toString()).isEqualTo(
                "{\"session\":true,\"human\":true,\"slack\":false,\"email\":false,\"sms\":false,\"whatsapp\":false}");
    }

    @Test
    void aCallForAChannelTheGatewayCannotReachIsStoredListedAndAnsweredThroughRespond() throws Exception {
        String callId = id("call");
        ObjectNode slack = Json.object();
        slack.putObject("slack").put("channel_or_user_id", "U123").put("context_about_channel_or_user", "the lead");
        ObjectNode call = functionCall(callId, "refund", slack);
        assertThat(post(HL + "/function_calls", call).status()).isEqualTo(201);
        JsonNode item = awaitPending(gateway, "function_calls", i -> i.path("call_id").asText().equals(callId));
        assertThat(item.at("/spec/channel")).isEqualTo(slack);
        post(HL + "/agent/function_calls/" + callId + "/respond", Json.object().put("approved", true));
        assertThat(get(HL + "/function_calls/" + callId).body().at("/status/approved").asBoolean()).isTrue();
    }

    @Test
    void humansAreEnrolledWithChannelsButAgentsSeeOnlyIdNameAndDescription() throws Exception {
        try (TestGateway g = keyed(dataDir.resolve("humans"))) {
            ObjectNode jane = Json.object().put("name", "Jane Doe")
                    .put("description", "knows about technology and entrepreneurship");
            jane.putArray("prioritizedContactChannels").addObject().putObject("email").put("address", "jane@example.com");
            Res enrolled = post(g, A2H + "/humans", jane);
            assertThat(enrolled.status()).as(enrolled.body().toString()).isEqualTo(201);
            String janeId = enrolled.body().path("id").asText();
            assertThat(enrolled.body().at("/prioritizedContactChannels/0/email/address").asText())
                    .isEqualTo("jane@example.com");
            post(g, A2H + "/humans", Json.object().put("name", "John Doe").put("description", "sales and marketing"));

            JsonNode all = get(g, A2H + "/humans").body().path("humans");
            assertThat(all).extracting(h -> h.path("name").asText()).containsExactly("Jane Doe", "John Doe");
            assertThat(all.get(0).toString()).doesNotContain("jane@example.com");
            assertThat(all.get(0).has("prioritizedContactChannels")).isFalse();
            assertThat(get(g, A2H + "/humans/search?q=TECHNOLOGY%20jane").body().path("humans"))
                    .extracting(h -> h.path("id").asText()).containsExactly(janeId);
            assertThat(get(g, A2H + "/humans/search?q=doe").body().path("humans")).hasSize(2);
            assertThat(get(g, A2H + "/humans/search?q=nobody").body().path("humans")).isEmpty();
            JsonNode one = get(g, A2H + "/humans/" + janeId).body();
            assertThat(one.toString()).isEqualTo(all.get(0).toString());
        }
    }

    @Test
    void aCallAddressedToAHumanGoesToTheirFirstSessionChannel() throws Exception {
        String conversation = id("s");
        ObjectNode human = Json.object().put("name", "Ops on call").put("description", "approves payments");
        var channels = human.putArray("prioritizedContactChannels");
        channels.addObject().putObject("slack").put("channel_or_user_id", "U999");
        channels.add(session(conversation));
        String humanId = post(A2H + "/humans", human).body().path("id").asText();
        ObjectNode toHuman = Json.object();
        toHuman.putObject("human").put("human_id", humanId);
        String callId = id("call");
        assertThat(post(HL + "/function_calls", functionCall(callId, "pay_invoice", toHuman)).status()).isEqualTo(201);
        try (WsClient hai = join(gateway, conversation)) {
            JsonNode request = approvalRequest(hai);
            assertThat(request.path("tool_name").asText()).isEqualTo("pay_invoice");
            answer(hai, request, true, null);
            assertThat(decided(gateway, HL + "/function_calls/" + callId).path("approved").asBoolean()).isTrue();
        }
    }

    // ---- refusals --------------------------------------------------------------------------

    static Stream<Arguments> badInput() {
        String fc = HL + "/function_calls";
        String hc = HL + "/contact_requests";
        return Stream.of(
                Arguments.of("POST", fc, "{\"run_id\":", 400, "invalid_json", null),
                Arguments.of("POST", fc, "[1, 2]", 400, "invalid_json", null),
                Arguments.of("POST", fc, "", 400, "invalid_json", null),
                Arguments.of("POST", fc, "{\"call_id\":\"c\",\"spec\":{\"fn\":\"f\"}}", 422, "validation_error", "run_id"),
                Arguments.of("POST", fc, "{\"run_id\":7,\"call_id\":\"c\",\"spec\":{\"fn\":\"f\"}}", 422,
                        "validation_error", "run_id"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"spec\":{\"fn\":\"f\"}}", 422, "validation_error", "call_id"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"a/b\",\"spec\":{\"fn\":\"f\"}}", 422,
                        "validation_error", "call_id"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"\",\"spec\":{\"fn\":\"f\"}}", 422,
                        "validation_error", "call_id"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\"}", 422, "validation_error", "spec"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":\"f\"}", 422,
                        "validation_error", "spec"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"kwargs\":{}}}", 422,
                        "validation_error", "spec.fn"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":42}}", 422,
                        "validation_error", "spec.fn"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\",\"kwargs\":[1]}}",
                        422, "validation_error", "spec.kwargs"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\",\"state\":\"x\"}}",
                        422, "validation_error", "spec.state"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\","
                        + "\"reject_options\":{}}}", 422, "validation_error", "spec.reject_options"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\","
                        + "\"reject_options\":[{\"title\":\"t\"}]}}", 422, "validation_error", "spec.reject_options[0].name"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\","
                        + "\"channel\":{\"carrier_pigeon\":{}}}}", 422, "validation_error", "spec.channel"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\","
                        + "\"channel\":\"slack\"}}", 422, "validation_error", "spec.channel"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\","
                        + "\"channel\":{\"session\":{}}}}", 422, "validation_error", "spec.channel.session.session_id"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"fn\":\"f\","
                        + "\"channel\":{\"slack\":\"U1\"}}}", 422, "validation_error", "spec.channel.slack"),
                Arguments.of("POST", fc, "{\"run_id\":\"r\",\"call_id\":\"c-unknown-human\",\"spec\":{\"fn\":\"f\","
                        + "\"channel\":{\"human\":{\"human_id\":\"human_nobody\"}}}}", 422, "validation_error",
                        "spec.channel.human.human_id"),
                Arguments.of("POST", hc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{}}", 422, "validation_error",
                        "spec.msg"),
                Arguments.of("POST", hc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"msg\":\"  \"}}", 422,
                        "validation_error", "spec.msg"),
                Arguments.of("POST", hc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"msg\":\"m\",\"subject\":1}}",
                        422, "validation_error", "spec.subject"),
                Arguments.of("POST", hc, "{\"run_id\":\"r\",\"call_id\":\"c\",\"spec\":{\"msg\":\"m\","
                        + "\"response_options\":[\"yes\"]}}", 422, "validation_error", "spec.response_options[0]"),
                Arguments.of("POST", HL + "/agent/function_calls/x/respond", "nope", 400, "invalid_json", null),
                Arguments.of("POST", HL + "/agent/function_calls/x/respond", "{}", 422, "validation_error", "approved"),
                Arguments.of("POST", HL + "/agent/function_calls/x/respond", "{\"approved\":\"yes\"}", 422,
                        "validation_error", "approved"),
                Arguments.of("POST", HL + "/agent/function_calls/x/respond", "{\"approved\":true,\"comment\":5}", 422,
                        "validation_error", "comment"),
                Arguments.of("POST", HL + "/agent/human_contacts/x/respond", "{}", 422, "validation_error", "response"),
                Arguments.of("POST", HL + "/agent/human_contacts/x/respond", "{\"response\":true}", 422,
                        "validation_error", "response"),
                Arguments.of("GET", HL + "/agent/function_calls/pending?limit=0", null, 422, "validation_error", "limit"),
                Arguments.of("GET", HL + "/agent/function_calls/pending?limit=many", null, 422, "validation_error",
                        "limit"),
                Arguments.of("GET", HL + "/agent/human_contacts/pending?offset=-1", null, 422, "validation_error",
                        "offset"),
                Arguments.of("POST", A2H + "/humans", "{\"description\":\"d\"}", 422, "validation_error", "name"),
                Arguments.of("POST", A2H + "/humans", "{\"name\":\"n\",\"prioritizedContactChannels\":{}}", 422,
                        "validation_error", "prioritizedContactChannels"),
                Arguments.of("POST", A2H + "/humans", "{\"name\":\"n\",\"prioritizedContactChannels\":"
                        + "[{\"human\":{\"human_id\":\"h\"}}]}", 422, "validation_error", "prioritizedContactChannels[0]"),
                Arguments.of("GET", A2H + "/humans/search", null, 422, "validation_error", "q"));
    }

    @ParameterizedTest(name = "{0} {1} {2} gets {3} {4}")
    @MethodSource("badInput")
    void badInputGetsA4xxWithAnErrorCodeAndMessage(String method, String path, String body, int status, String code,
                                                 String field) throws Exception {
        assertError(send(gateway, method, path, body, KEY), status, code, field);
    }

    @Test
    void unknownIdsAndPathsGet404AndWrongMethods405() throws Exception {
        assertError(get(HL + "/function_calls/nope"), 404, "not_found", null);
        assertError(get(HL + "/contact_requests/nope"), 404, "not_found", null);
        assertError(get(HL + "/human_contacts/nope"), 404, "not_found", null);
        assertError(post(HL + "/agent/function_calls/nope/respond", Json.object().put("approved", true)),
                404, "not_found", null);
        assertError(post(HL + "/agent/human_contacts/nope/respond", Json.object().put("response", "x")),
                404, "not_found", null);
        assertError(get(A2H + "/humans/human_nope"), 404, "not_found", null);
        assertError(get(HL + "/nothing/here"), 404, "not_found", null);
        assertError(get(HL + "/humans"), 404, "not_found", null);
        assertError(get(HL + "/channels"), 404, "not_found", null);

        String contactId = id("contact");
        post(HL + "/contact_requests", contact(contactId, "?", null));
        assertError(get(HL + "/function_calls/" + contactId), 404, "not_found", null);

        Res wrong = send(gateway, "DELETE", HL + "/function_calls", null, KEY);
        assertError(wrong, 405, "method_not_allowed", null);
        assertThat(wrong.raw().headers().firstValue("Allow")).contains("POST");
        assertError(send(gateway, "PUT", A2H + "/humans", "{}", KEY), 405, "method_not_allowed", null);
        assertError(send(gateway, "POST", HL + "/agent/function_calls/pending", "{}", KEY), 405,
                "method_not_allowed", null);
    }

    // ---- authentication --------------------------------------------------------------------

    @Test
    void withKeysConfiguredAMissingOrWrongKeyGets401AndEitherKeyIsServed() throws Exception {
        String path = HL + "/agent/function_calls/pending";
        Res missing = send(gateway, "GET", path, null, null);
        assertError(missing, 401, "auth_failed", null);
        assertThat(missing.raw().headers().firstValue("WWW-Authenticate")).contains("Bearer");
        assertError(send(gateway, "GET", path, null, "wrong-key"), 401, "auth_failed", null);
        assertError(send(gateway, "POST", HL + "/function_calls",
                functionCall(id("call"), "f", null).toString(), KEY + "x"), 401, "auth_failed", null);
        assertThat(send(gateway, "GET", path, null, KEY).status()).isEqualTo(200);
        assertThat(send(gateway, "GET", A2H + "/humans", null, OTHER_KEY).status()).isEqualTo(200);
    }

    @Test
    void withoutAKeyLoopbackCallersAreServedAndStartUpWarnsSo() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.switchboard.adapter.a2h.A2hServiceProvider");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (TestGateway open = TestGateway.start(dataDir.resolve("open"))) {
            assertThat(logged.list).anySatisfy(e -> {
                assertThat(e.getLevel().toString()).isEqualTo("WARN");
                assertThat(e.getFormattedMessage()).contains("a2h-api-key").contains("loopback");
            });
            assertThat(send(open, "GET", HL + "/agent/function_calls/pending", null, null).status()).isEqualTo(200);
            Res created = send(open, "POST", HL + "/function_calls", functionCall("c1", "f", null).toString(), "any");
            assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
        } finally {
            logger.detachAppender(logged);
        }
    }

    // ---- durability ------------------------------------------------------------------------

    @Test
    void callsContactsHumansAndDecisionsSurviveARestartAndACallAnsweredAfterItIsReported() throws Exception {
        Path dir = dataDir.resolve("restart");
        String conversation = id("s");
        String humanId;
        JsonNode answeredBefore;
        try (TestGateway g = keyed(dir)) {
            post(g, HL + "/function_calls", functionCall("early", "archive", null));
            answeredBefore = post(g, HL + "/agent/function_calls/early/respond",
                    Json.object().put("approved", true).put("comment", "fine")).body();
            post(g, HL + "/function_calls", functionCall("late", "send_email", session(conversation)));
            post(g, HL + "/contact_requests", contact("question", "Which region?", null));
            humanId = post(g, A2H + "/humans", Json.object().put("name", "Jane")).body().path("id").asText();
        }
        try (TestGateway g = keyed(dir)) {
            assertThat(get(g, HL + "/function_calls/early").body()).isEqualTo(answeredBefore);
            assertThat(get(g, A2H + "/humans/" + humanId).body().path("name").asText()).isEqualTo("Jane");
            assertThat(get(g, HL + "/agent/function_calls/pending").body().path("items"))
                    .extracting(i -> i.path("call_id").asText()).containsExactly("late");
            assertThat(get(g, HL + "/agent/human_contacts/pending").body().path("total").asInt()).isEqualTo(1);

            try (WsClient hai = join(g, conversation)) {
                JsonNode request = approvalRequest(hai);
                assertThat(request.path("tool_name").asText()).isEqualTo("send_email");
                answer(hai, request, true, "after the restart");
            }
            JsonNode status = decided(g, HL + "/function_calls/late");
            assertThat(status.path("approved").asBoolean()).isTrue();
            assertThat(status.path("comment").asText()).isEqualTo("after the restart");

            assertThat(post(g, HL + "/agent/human_contacts/question/respond", Json.object().put("response", "eu"))
                    .status()).isEqualTo(200);
        }
        try (TestGateway g = keyed(dir)) {
            assertThat(get(g, HL + "/contact_requests/question").body().at("/status/response").asText()).isEqualTo("eu");
            assertThat(get(g, HL + "/function_calls/late").body().at("/status/comment").asText())
                    .isEqualTo("after the restart");
            assertThat(get(g, HL + "/agent/function_calls/pending").body().path("total").asInt()).isZero();
        }
    }
}
