package dev.switchboard.adapter.agentscope;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.testkit.FieldCases;
import dev.switchboard.testkit.MalformedJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static dev.switchboard.testkit.FieldCases.assertRefused;
import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Decoding {@code AgentRequest} bodies into commands, and refusing bad ones with a typed error. */
class AgentScopeDecoderTest {
    private static final String VALID = "{\"input\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    private final AgentScopeTesting http = new AgentScopeTesting();

    private static List<Command> commands(Decoded decoded) {
        assertThat(decoded).isInstanceOf(Decoded.Commands.class);
        return ((Decoded.Commands) decoded).commands();
    }

    private Command.StartRun startRun(String body) {
        return startRun(http, body);
    }

    private static Command.StartRun startRun(AgentScopeTesting exchange, String body) {
        List<Command> commands = commands(exchange.decode(body));
        assertThat(commands).hasSize(1).first().isInstanceOf(Command.StartRun.class);
        return (Command.StartRun) commands.get(0);
    }

    @Test
    void theSpecsUsageExampleStartsARunInANewSessionAndStreams() {
        Command.StartRun start = startRun(fixture("agent_request.json"));

        assertThat(start.conversationId()).startsWith("session_");
        assertThat(start.runId()).startsWith("run_");
        assertThat(start.parentRunId()).isNull();
        assertThat(start.messages()).singleElement().satisfies(m -> {
            assertThat(m.role()).isEqualTo(Role.USER);
            assertThat(m.content()).isEqualTo("Describe this image");
            assertThat(m.id()).startsWith("msg_");
        });
        assertThat(start.tools()).isEmpty();
        assertThat(start.metadata()).isEqualTo(json("{\"model\":\"gpt-4-vision\"}"));
        assertThat(http.exchange().streaming()).isTrue();
    }

    @Test
    void aFullRequestPassesHistoryToolsModelAndSamplingOn() {
        Command.StartRun start = startRun(fixture("agent_request_full.json"));

        assertThat(start.conversationId()).isEqualTo("session-42");
        assertThat(start.messages()).containsExactly(
                InputMessage.text("msg_sys", Role.SYSTEM, "You are a food safety inspector's assistant."),
                InputMessage.text("msg_q1", Role.USER, "What does rule 4 say?"),
                new InputMessage("msg_fc", Role.ASSISTANT, "",
                        List.of(new ToolCallRef("call_1", "search_regulations", "{\"rule\": 4}")), null, null),
                new InputMessage("msg_fco", Role.TOOL, "Rule 4: keep it cold.", List.of(), "call_1",
                        "search_regulations"),
                InputMessage.text("msg_a1", Role.ASSISTANT, "Rule 4 asks for cold storage."),
                InputMessage.text("msg_q2", Role.USER, "And this one? Is it compliant?"));
        assertThat(start.tools()).containsExactly(
                new ToolSpec("search_regulations", "Searches the regulations", json("""
                        {"type":"object","properties":{"rule":{"type":"integer"}},"required":["rule"]}""")),
                new ToolSpec("take_photo", "Takes a photo", json("{\"type\":\"object\",\"properties\":{}}")));
        assertThat(start.metadata()).isEqualTo(json("""
                {"model":"qwen-max","user_id":"inspector-7","id":"req-1","temperature":0.2,"top_p":0.8,
                 "frequency_penalty":0.1,"presence_penalty":0,"max_tokens":512,"n":1,"seed":42,"stop":["END"]}"""));
        assertThat(start.context()).isNull();
        assertThat(start.state()).isNull();
        assertThat(start.forwardedProps()).isNull();
    }

    @Test
    void plainStringContentIsAcceptedAndTypeDefaultsToMessage() {
        Command.StartRun start = startRun("""
                {"input":[{"role":"user","content":"hello"}],"session_id":"s1","stream":false}""");

        assertThat(start.messages()).singleElement().extracting(InputMessage::content).isEqualTo("hello");
        assertThat(start.metadata()).isNull();
        assertThat(http.exchange().streaming()).isFalse();
    }

    @Test
    void aBareStringInputIsOneUserMessage() {
        Command.StartRun start = startRun("""
                {"input":"What are the rules for food storage?","session_id":"s1","model":"qwen-max"}""");

        assertThat(start.conversationId()).isEqualTo("s1");
        assertThat(start.messages()).singleElement().satisfies(m -> {
            assertThat(m.role()).isEqualTo(Role.USER);
            assertThat(m.content()).isEqualTo("What are the rules for food storage?");
            assertThat(m.id()).startsWith("msg_");
        });
        assertThat(start.metadata()).isEqualTo(json("{\"model\":\"qwen-max\"}"));
        assertThat(http.exchange().streaming()).isTrue();
    }

    @Test
    void aBareStringInputOverTheLimitIsAnInvalidInput() {
        AgentScopeTesting small = new AgentScopeTesting(new AdapterContext(5));

        assertThat(small.decode("{\"input\":\"héllo\"}")).isInstanceOf(Decoded.Commands.class);
        assertThat(small.decode("{\"input\":\"too long\"}")).isInstanceOfSatisfying(Decoded.Failure.class, f -> {
            assertThat(f.error().code()).isEqualTo(ErrorCode.INVALID_FIELD);
            assertThat(f.error().details()).containsEntry("field", "input");
            assertThat(f.error().message()).contains("at most 5 characters");
        });
    }

    @Test
    void messageIdsGivenAreKeptSoAResentHistoryIsRecognised() {
        String body = """
                {"input":[{"id":"msg_1","role":"user","content":"a"},{"id":"msg_2","role":"assistant","content":"b"},
                          {"role":"user","content":"c"}],"session_id":"s1"}""";

        Command.StartRun first = startRun(body);
        Command.StartRun again = startRun(new AgentScopeTesting(), body);

        assertThat(first.messages()).extracting(InputMessage::id).startsWith("msg_1", "msg_2");
        assertThat(again.messages()).extracting(InputMessage::id).startsWith("msg_1", "msg_2");
        assertThat(first.runId()).isNotEqualTo(again.runId());
    }

    @Test
    void theNewestUserMessageMustHaveTextEvenWhenAnEarlierOneHas() {
        GatewayError error = failure("""
                {"input":[{"role":"user","content":"first"},{"role":"assistant","content":"ok"},
                          {"role":"user","content":[{"type":"image","image_url":"https://x/y.png"}]}]}""");

        assertThat(error.code()).isEqualTo(ErrorCode.MISSING_FIELD);
        assertThat(error.details()).containsEntry("field", "input[2].content");
    }

    @Test
    void messageTypesAreReadWhateverTheirCase() {
        Command.StartRun start = startRun("""
                {"input":[{"type":"FUNCTION_CALL","role":"assistant","content":[{"type":"data",
                             "data":{"call_id":"c1","name":"t","arguments":"{}"}}]},
                          {"type":"Message","role":"user","content":"go on"}]}""");

        assertThat(start.messages()).extracting(InputMessage::role).containsExactly(Role.ASSISTANT, Role.USER);
    }

    @Test
    void pluginCallsAndOutputsAreToolCallsAndResultsAndSeveralOutputsGetStableIds() {
        Command.StartRun start = startRun("""
                {"input":[{"id":"m1","type":"plugin_call","role":"assistant","content":[
                             {"type":"data","data":{"call_id":"c1","name":"a","arguments":"{\\"x\\":1}"}},
                             {"type":"data","data":{"call_id":"c2","name":"b"}}]},
                          {"id":"m2","type":"plugin_call_output","role":"tool","content":[
                             {"type":"data","data":{"call_id":"c1","output":"one"}},
                             {"type":"data","data":{"call_id":"c2","output":{"n":2}}}]},
                          {"role":"user","content":"thanks"}]}""");

        assertThat(start.messages().get(0).toolCalls()).containsExactly(new ToolCallRef("c1", "a", "{\"x\":1}"),
                new ToolCallRef("c2", "b", "{}"));
        assertThat(start.messages().subList(1, 3)).containsExactly(
                new InputMessage("m2", Role.TOOL, "one", List.of(), "c1", null),
                new InputMessage("m2#1", Role.TOOL, "{\"n\":2}", List.of(), "c2", null));
    }

    @Test
    void recordsTheEventCoreDoesNotKeepArePassedOver() {
        Command.StartRun start = startRun("""
                {"input":[{"type":"reasoning","role":"assistant","content":[{"type":"text","text":"hmm"}]},
                          {"type":"heartbeat"},
                          {"type":"mcp_approval_request","role":"assistant","content":[{"type":"data","data":{}}]},
                          {"role":"user","content":[{"type":"text","text":"hi"},{"type":"audio","data":"AAA"},
                                                    {"type":"file","file_url":"https://x/f.pdf"},
                                                    {"type":"data","data":{"k":"v"}}]}]}""");

        assertThat(start.messages()).singleElement().extracting(InputMessage::content).isEqualTo("hi");
    }

    @Test
    void toolsWithoutANameArePassedOver() {
        Command.StartRun start = startRun("""
                {"input":[{"role":"user","content":"hi"}],
                 "tools":[{"type":"function","function":{"description":"no name"}},{"name":""},{"type":"browser"},
                          {"type":"function","function":{"name":"ok"}}]}""");

        assertThat(start.tools()).containsExactly(new ToolSpec("ok", null, null));
    }

    @Test
    void anApprovalResponseJoinsTheSessionThenDecides() {
        List<Command> commands = commands(http.decode(fixture("mcp_approval_response.json")));

        assertThat(commands).containsExactly(new Command.Subscribe("session-42", -1, false),
                new Command.DecideApproval("appr-1", true, "report looks right", json("""
                        {"approval_request_id":"appr-1","approve":true,"reason":"report looks right"}""")));
        assertThat(http.exchange().streaming()).isTrue();
    }

    @Test
    void aRejectionWithoutAReasonDecidesWithNoFeedback() {
        List<Command> commands = commands(http.decode("""
                {"input":[{"type":"mcp_approval_response","content":[{"type":"data",
                           "data":{"approval_request_id":"appr-1","approve":false,"reason":null}}]}],
                 "session_id":"s1","stream":false}"""));

        assertThat(commands.get(1)).isInstanceOfSatisfying(Command.DecideApproval.class, d -> {
            assertThat(d.approved()).isFalse();
            assertThat(d.feedback()).isNull();
        });
        assertThat(http.exchange().streaming()).isFalse();
    }

    @Test
    void aRequestWithAnApprovalResponseStartsNoRunOfItsOwn() {
        List<Command> commands = commands(http.decode("""
                {"input":[{"role":"user","content":"also, hi"},
                          {"type":"mcp_approval_response","content":[{"type":"data",
                           "data":{"approval_request_id":"a1","approve":true}}]},
                          {"type":"mcp_approval_response","content":[{"type":"data",
                           "data":{"approval_request_id":"a2","approve":false}}]}],
                 "session_id":"s1"}"""));

        assertThat(commands).extracting(c -> c.getClass().getSimpleName())
                .containsExactly("Subscribe", "DecideApproval", "DecideApproval");
    }

    @Test
    void userTextAtTheLimitIsAcceptedAndAssistantTextIsNotLimited() {
        AgentScopeTesting small = new AgentScopeTesting(new AdapterContext(5));

        assertThat(small.decode("""
                {"input":[{"role":"assistant","content":"a long answer"},{"role":"user","content":"héllo"}]}"""))
                .isInstanceOf(Decoded.Commands.class);
    }

    // ---- refusals -------------------------------------------------------------------------

    private GatewayError failure(String body) {
        Decoded decoded = http.decode(body);
        assertThat(decoded).as("decoding %s", body).isInstanceOf(Decoded.Failure.class);
        return ((Decoded.Failure) decoded).error();
    }

    static Stream<Arguments> badRequests() {
        return Stream.of(
                Arguments.of("{}", ErrorCode.MISSING_FIELD, "input", 422),
                Arguments.of("{\"input\":null}", ErrorCode.MISSING_FIELD, "input", 422),
                Arguments.of("{\"input\":\"\"}", ErrorCode.MISSING_FIELD, "input", 422),
                Arguments.of("{\"input\":\" \\n \"}", ErrorCode.MISSING_FIELD, "input", 422),
                Arguments.of("{\"input\":42}", ErrorCode.INVALID_FIELD, "input", 422),
                Arguments.of("{\"input\":true}", ErrorCode.INVALID_FIELD, "input", 422),
                Arguments.of("{\"input\":{\"role\":\"user\"}}", ErrorCode.INVALID_FIELD, "input", 422),
                Arguments.of("{\"input\":[]}", ErrorCode.MISSING_FIELD, "input", 422),
                Arguments.of("{\"input\":[{\"role\":\"assistant\",\"content\":\"hi\"}]}",
                        ErrorCode.MISSING_FIELD, "input", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\"}]}", ErrorCode.MISSING_FIELD, "input[0].content", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":\"  \"}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[]}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content", 422),
                Arguments.of("{\"input\":[\"hi\"]}", ErrorCode.INVALID_FIELD, "input[0]", 422),
                Arguments.of("{\"input\":[{\"content\":\"hi\"}]}", ErrorCode.MISSING_FIELD, "input[0].role", 422),
                Arguments.of("{\"input\":[{\"role\":\"robot\",\"content\":\"hi\"}]}",
                        ErrorCode.INVALID_FIELD, "input[0].role", 422),
                Arguments.of("{\"input\":[{\"role\":7,\"content\":\"hi\"}]}",
                        ErrorCode.INVALID_FIELD, "input[0].role", 422),
                Arguments.of("{\"input\":[{\"type\":3,\"role\":\"user\",\"content\":\"hi\"}]}",
                        ErrorCode.INVALID_FIELD, "input[0].type", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":42}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[\"hi\"]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0]", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content[0].type", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0].type", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":5}]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0].text", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"image_url\":{}}]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0].image_url", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"data\",\"data\":[1]}]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0].data", 422),
                Arguments.of("{\"input\":[{\"id\":\"\",\"role\":\"user\",\"content\":\"hi\"}]}",
                        ErrorCode.INVALID_FIELD, "input[0].id", 422),
                Arguments.of("{\"input\":[{\"type\":\"function_call\",\"content\":[{\"type\":\"data\",\"data\":{\"name\":\"t\"}}]},"
                        + "{\"role\":\"user\",\"content\":\"hi\"}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content[0].data.call_id", 422),
                Arguments.of("{\"input\":[{\"type\":\"function_call_output\",\"content\":[{\"type\":\"data\",\"data\":{}}]},"
                        + "{\"role\":\"user\",\"content\":\"hi\"}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content[0].data.call_id", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":\"hot\"}",
                        ErrorCode.INVALID_FIELD, "temperature", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1.5}",
                        ErrorCode.INVALID_FIELD, "max_tokens", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stop\":[\"a\",1]}",
                        ErrorCode.INVALID_FIELD, "stop", 422),
                Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[\"search\"]}",
                        ErrorCode.INVALID_FIELD, "tools[0]", 422),
                Arguments.of("{\"input\":[{\"type\":\"mcp_approval_response\",\"content\":[{\"type\":\"data\","
                        + "\"data\":{\"approval_request_id\":\"a1\",\"approve\":true}}]}]}",
                        ErrorCode.MISSING_FIELD, "session_id", 422),
                Arguments.of("{\"session_id\":\"s\",\"input\":[{\"type\":\"mcp_approval_response\"}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content", 422),
                Arguments.of("{\"session_id\":\"s\",\"input\":[{\"type\":\"mcp_approval_response\",\"content\":["
                        + "{\"type\":\"data\",\"data\":{\"approve\":true}}]}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content[0].data.approval_request_id", 422),
                Arguments.of("{\"session_id\":\"s\",\"input\":[{\"type\":\"mcp_approval_response\",\"content\":["
                        + "{\"type\":\"data\",\"data\":{\"approval_request_id\":\"a1\"}}]}]}",
                        ErrorCode.MISSING_FIELD, "input[0].content[0].data.approve", 422),
                Arguments.of("{\"session_id\":\"s\",\"input\":[{\"type\":\"mcp_approval_response\",\"content\":["
                        + "{\"type\":\"data\",\"data\":{\"approval_request_id\":\"a1\",\"approve\":\"yes\"}}]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0].data.approve", 422),
                Arguments.of("{\"session_id\":\"s\",\"input\":[{\"type\":\"mcp_approval_response\",\"content\":["
                        + "{\"type\":\"data\",\"data\":{\"approval_request_id\":\"a1\",\"approve\":true,\"reason\":1}}]}]}",
                        ErrorCode.INVALID_FIELD, "input[0].content[0].data.reason", 422));
    }

    @ParameterizedTest
    @MethodSource("badRequests")
    void aBadRequestIsRefusedWithItsCodeFieldAndHttpStatus(String body, ErrorCode code, String field, int status) {
        GatewayError error = failure(body);

        assertThat(error.code()).isEqualTo(code);
        assertThat(error.code().httpStatus()).isEqualTo(status);
        if (field == null) {
            assertThat(error.details()).doesNotContainKey("field");
        } else {
            assertThat(error.details()).containsEntry("field", field);
        }
        assertThat(error.message()).isNotBlank();
    }

    static Stream<Arguments> notOneJsonObject() {
        return Stream.concat(MalformedJson.notJson(VALID), MalformedJson.notObjects(VALID));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notOneJsonObject")
    void aBodyThatIsNotOneJsonObjectIsInvalidJsonWithStatus400(String name, String body) {
        GatewayError error = failure(body);

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_JSON);
        assertThat(error.code().httpStatus()).isEqualTo(400);
        assertThat(error.details()).doesNotContainKey("field");
        assertThat(error.message()).isNotBlank();
    }

    static Stream<Arguments> badOptions() {
        return FieldCases.in(VALID)
                .optionalBoolean("stream")
                .optionalId("session_id")
                .optionalString("model")
                .optionalArray("tools")
                .rows();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badOptions")
    void aBadOptionIsRefusedNamingItWithStatus422(String name, String body, ErrorCode code, String field) {
        assertRefused(http.decode(body), code, field);
        assertThat(code.httpStatus()).isEqualTo(422);
    }

    @Test
    void userTextOverTheLimitIsAnInvalidField() {
        AgentScopeTesting small = new AgentScopeTesting(new AdapterContext(5));
        Decoded decoded = small.decode("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"abc\"},"
                + "{\"type\":\"text\",\"text\":\"def\"}]}]}");

        assertThat(decoded).isInstanceOfSatisfying(Decoded.Failure.class, f -> {
            assertThat(f.error().code()).isEqualTo(ErrorCode.INVALID_FIELD);
            assertThat(f.error().details()).containsEntry("field", "input[0].content");
            assertThat(f.error().message()).contains("at most 5 characters");
            assertThat(f.error().code().httpStatus()).isEqualTo(422);
        });
    }

    @Test
    void anEarlierUserMessageOverTheLimitIsRefusedToo() {
        AgentScopeTesting small = new AgentScopeTesting(new AdapterContext(5));

        assertThat(small.decode("{\"input\":[{\"role\":\"user\",\"content\":\"too long\"},"
                + "{\"role\":\"user\",\"content\":\"ok\"}]}"))
                .isInstanceOfSatisfying(Decoded.Failure.class,
                        f -> assertThat(f.error().details()).containsEntry("field", "input[0].content"));
    }

    @Test
    void anApprovalReasonOverTheLimitIsRefused() {
        AgentScopeTesting small = new AgentScopeTesting(new AdapterContext(5));

        assertThat(small.decode("{\"session_id\":\"s\",\"input\":[{\"type\":\"mcp_approval_response\",\"content\":["
                + "{\"type\":\"data\",\"data\":{\"approval_request_id\":\"a1\",\"approve\":true,\"reason\":\"because\"}}]}]}"))
                .isInstanceOfSatisfying(Decoded.Failure.class,
                        f -> assertThat(f.error().details()).containsEntry("field", "input[0].content[0].data.reason"));
    }

    @Test
    void decodingNeverThrowsOnHostileInput() {
        assertThat(http.decode("{\"input\":" + "[".repeat(10_000))).isInstanceOf(Decoded.Failure.class);
        assertThat(new AgentScopeTesting().decode("{\"input\":[],\"n\":" + "1".repeat(1000) + "}"))
                .isInstanceOf(Decoded.Failure.class);
    }
}
