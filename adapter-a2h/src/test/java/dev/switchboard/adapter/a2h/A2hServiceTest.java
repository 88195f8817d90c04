package dev.switchboard.adapter.a2h;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.Json;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RestRequest;
import dev.switchboard.core.spi.RestResponse;
import dev.switchboard.core.spi.RestServiceProvider;
import dev.switchboard.core.testing.FinishingRuntime;
import dev.switchboard.core.testing.RecordingSubscriber;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The A2H service without sockets: requests straight to {@code handle}, a hub over an in-memory store. */
class A2hServiceTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final InMemoryConversationStore store = new InMemoryConversationStore();
    private final ConversationHub hub = ConversationHub.builder().store(store).runtime(new FinishingRuntime()).build();

    @AfterEach
    void close() {
        hub.close();
    }

    private A2hService service(String... keys) {
        return (A2hService) new A2hServiceProvider().create(new RestServiceProvider.Context(hub.conversations(),
                hub.operatorApprovals(), store,
                key -> key.equals(A2hServiceProvider.API_KEY_OPTION) && keys.length > 0
                        ? Optional.of(String.join("\n", keys)) : Optional.empty()));
    }

    private static RestRequest request(String method, String path, Object body, boolean loopback,
                                       String authorization) {
        return new RestRequest(method, A2hService.HUMANLAYER_PREFIX, path, Map.of(),
                authorization == null ? Map.of() : Map.of("authorization", authorization),
                body == null ? null : body.toString(), loopback);
    }

    private static RestResponse call(A2hService s, RestRequest r) {
        return s.handle(r).toCompletableFuture().join();
    }

    private static JsonNode json(RestResponse r) throws Exception {
        return Json.MAPPER.readTree(r.json());
    }

    @Test
    void withoutAKeyAFarCallerIsRefused403AndALoopbackCallerIsServed() throws Exception {
        A2hService open = service();
        RestResponse far = call(open, request("GET", "/agent/function_calls/pending", null, false, null));
        assertThat(far.status()).isEqualTo(403);
        assertThat(json(far).at("/error/message").asText()).contains("--a2h-api-key");
        assertThat(call(open, request("GET", "/agent/function_calls/pending", null, true, null)).status())
                .isEqualTo(200);
    }

    @Test
    void withKeysEvenALoopbackCallerNeedsOneAndTheKeyNamesWhoDecided() throws Exception {
        A2hService keyed = service("k1", "k2");
        assertThat(call(keyed, request("GET", "/agent/function_calls/pending", null, true, null)).status())
                .isEqualTo(401);
        assertThat(call(keyed, request("GET", "/agent/function_calls/pending", null, true, "Basic k1")).status())
                .isEqualTo(401);
        ObjectNode fc = Json.object().put("run_id", "r").put("call_id", "c");
        fc.putObject("spec").put("fn", "f");
        assertThat(call(keyed, request("POST", "/function_calls", fc, true, "bearer k2")).status()).isEqualTo(201);
        RestResponse decided = call(keyed, request("POST", "/agent/function_calls/c/respond",
                Json.object().put("approved", true), true, "Bearer k2"));
        assertThat(json(decided).at("/status/user_info/id").asText()).as(decided.json()).isEqualTo("a2h-key-2");
    }

    @Test
    void aContactIsShownAsAHumanContactQuestionWithItsMessageAndOptions() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(Command.Subscribe.live("room"), person);
        ObjectNode contact = Json.object().put("run_id", "r").put("call_id", "q1");
        ObjectNode spec = contact.putObject("spec").put("msg", "Which region?");
        spec.putObject("channel").putObject("session").put("session_id", "room");
        spec.putArray("response_options").addObject().put("name", "eu");
        assertThat(call(service(), request("POST", "/contact_requests", contact, true, null)).status()).isEqualTo(201);

        List<Envelope> got = person.until(e -> e instanceof Event.ApprovalRequested, WAIT);
        Envelope shown = got.get(got.size() - 1);
        Event.ApprovalRequested asked = (Event.ApprovalRequested) shown.event();
        assertThat(asked.toolName()).isEqualTo(A2hCalls.CONTACT_TOOL);
        assertThat(asked.toolCallId()).isEqualTo("q1");
        assertThat(asked.description()).isEqualTo("Which region?");
        assertThat(asked.arguments().at("/response_options/0/name").asText()).isEqualTo("eu");
        assertThat(asked.risk()).isEqualTo(RiskLevel.LOW);
        assertThat(shown.conversationId()).isEqualTo("room");
    }

    @Test
    void aContactListedBetweenTheWritesOfItsCallAndItsIndexEntryIsShownWhole() throws Exception {
        // As a lister finds it mid-create: the hub asked, the call stored, its index entry not yet.
        ApprovalRecord asked = hub.operatorApprovals().requestApproval("room", new ApprovalRequest("q2",
                A2hCalls.CONTACT_TOOL, "Which cost centre?", Json.object().put("msg", "Which cost centre?"), null,
                RiskLevel.LOW)).get(5, TimeUnit.SECONDS);
        ObjectNode call = Json.object().put("run_id", "r").put("call_id", "q2");
        call.putObject("spec").put("msg", "Which cost centre?").putObject("channel").putObject("session")
                .put("session_id", "room");
        ObjectNode doc = Json.object().put("approval_id", asked.approvalId()).put("conversation_id", "room")
                .put("requested_at", 1L);
        doc.set("call", call);
        store.putDocument(A2hCalls.Kind.HUMAN_CONTACT.collection, "q2", doc.toString(), false);

        JsonNode contacts = json(call(service(), request("GET", "/agent/human_contacts/pending", null, true, null)));
        assertThat(contacts.path("items")).hasSize(1);
        assertThat(contacts.at("/items/0/spec/msg").asText()).isEqualTo("Which cost centre?");
        JsonNode functions = json(call(service(), request("GET", "/agent/function_calls/pending", null, true, null)));
        assertThat(functions.path("items")).as("not a run's function call").isEmpty();
    }

    @Test
    void aSessionChannelMayBeWrittenInCamelCaseInsideAHuman() {
        ObjectNode channel = Json.object();
        channel.putObject("session").put("sessionId", "room");
        A2hInput in = new A2hInput();
        A2hChannels.check(channel, "c", false, in);
        assertThat(in.error()).isNull();
        assertThat(A2hChannels.session(channel)).contains("room");
    }

    @Test
    void aChannelNamingSeveralTypesIsCheckedTypeByType() {
        ObjectNode channel = Json.object();
        channel.putObject("email").put("address", "a@example.com");
        channel.putObject("session");
        A2hInput in = new A2hInput();
        A2hChannels.check(channel, "spec.channel", true, in);
        assertThat(in.error().details()).containsEntry("field", "spec.channel.session.session_id");
    }

    @Test
    void theInputReaderKeepsOnlyTheFirstProblem() {
        A2hInput in = new A2hInput();
        ObjectNode body = in.body("{\"a\": 1}");
        assertThat(in.text(body, "a", "a", 10)).isNull();
        assertThat(in.text(body, "b", "b", 10)).isNull();
        assertThat(in.error().details()).containsEntry("field", "a");
        assertThat(in.failed()).isTrue();
    }
}
