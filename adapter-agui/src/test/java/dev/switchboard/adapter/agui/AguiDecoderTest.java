package dev.switchboard.adapter.agui;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.testkit.FieldCases;
import dev.switchboard.testkit.MalformedJson;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

/** Decoding run inputs and approval responses on both transports, and refusing bad ones. */
class AguiDecoderTest {
    private static final String MINIMAL = "{\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"hi\"}]}";

    private static List<Command> commands(AguiTesting side, String text) {
        Decoded decoded = side.decode(text);
        assertThat(decoded).as("decoding %s", text).isInstanceOf(Decoded.Commands.class);
        return ((Decoded.Commands) decoded).commands();
    }

    private static Command.StartRun startRun(AguiTesting side, String text) {
        List<Command> commands = commands(side, text);
        assertThat(commands).singleElement().isInstanceOf(Command.StartRun.class);
        return (Command.StartRun) commands.get(0);
    }

    private static GatewayError failure(AguiTesting side, String text) {
        Decoded decoded = side.decode(text);
        assertThat(decoded).as("decoding %s", text).isInstanceOf(Decoded.Failure.class);
        return ((Decoded.Failure) decoded).error();
    }

    /** The minimal valid 1.0 input with one field replaced (or removed, for a null value). */
    private static String with(String field, String valueJson) {
        return FieldCases.in(MINIMAL).with(field, valueJson);
    }

    /** The minimal valid 1.0 input whose only message is this one. */
    private static String withMessage(String messageJson) {
        return with("messages", "[" + messageJson + "]");
    }

    // ---- AGORA profile (WebSocket) --------------------------------------------------------

    @Test
    void profileRunAgentInputDecodesToStartRunWithAGeneratedMessageId() {
        Command.StartRun run = startRun(AguiTesting.ws(), fixture("run_agent_input.json"));

        assertThat(run.conversationId()).isEqualTo("abc123-...");
        assertThat(run.runId()).isEqualTo("run-456-...");
        assertThat(run.parentRunId()).isNull();
        assertThat(run.messages()).singleElement().satisfies(m -> {
            assertThat(m.id()).startsWith("msg_");
            assertThat(m.role()).isEqualTo(Role.USER);
            assertThat(m.content()).isEqualTo("What are the food safety regulations?");
        });
        assertThat(run.tools()).isEmpty();
        assertThat(run.context()).isEqualTo(Json.object());
        assertThat(run.state()).isNull();
        assertThat(run.forwardedProps()).isNull();
        assertThat(run.metadata()).isNull();
    }

    @Test
    void profileInputWithoutRunIdGetsAGeneratedRunId() {
        Command.StartRun first = startRun(AguiTesting.ws(),
                "{\"threadId\":\"t1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        Command.StartRun second = startRun(AguiTesting.ws(),
                "{\"threadId\":\"t1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

        assertThat(first.runId()).startsWith("run_").isNotEqualTo(second.runId());
        assertThat(first.context()).isNull();
    }

    @Test
    void profileInputMayLeaveOutToolDescriptions() {
        Command.StartRun run = startRun(AguiTesting.ws(),
                "{\"threadId\":\"t1\",\"messages\":[],\"tools\":[{\"name\":\"search\"}]}");

        assertThat(run.tools()).singleElement().satisfies(t -> {
            assertThat(t.name()).isEqualTo("search");
            assertThat(t.description()).isEmpty();
            assertThat(t.parameters()).isEqualTo(Json.object());
        });
    }

    @Test
    void officialInputIsAcceptedOnTheWebSocketToo() {
        Command.StartRun run = startRun(AguiTesting.ws(), fixture("official_run_agent_input.json"));

        assertThat(run.runId()).isEqualTo("run-2");
        assertThat(run.messages()).hasSize(7);
        assertThat(run.context()).isEqualTo(json("[{\"description\":\"establishment\",\"value\":\"Restaurant De Gouden Leeuw\"}]"));
    }

    @Test
    void profileApprovalResponseDecodesToDecideApproval() {
        assertThat(commands(AguiTesting.ws(), fixture("tool_approval_response.json"))).containsExactly(
                new Command.DecideApproval("appr-xyz789", true, "Looks good, proceed with report generation", null));
    }

    @Test
    void approvalResponseWithoutFeedbackHasNullFeedback() {
        assertThat(commands(AguiTesting.ws(), "{\"type\":\"CUSTOM\",\"name\":\"agora:tool_approval_response\","
                + "\"value\":{\"approvalId\":\"a1\",\"approved\":false,\"feedback\":null}}"))
                .containsExactly(new Command.DecideApproval("a1", false, null, null));
    }

    @TestFactory
    Stream<DynamicTest> badApprovalResponseIsRefusedNamingTheField() {
        return FieldCases.in("{\"type\":\"CUSTOM\",\"name\":\"agora:tool_approval_response\","
                        + "\"value\":{\"approvalId\":\"a1\",\"approved\":true}}")
                .requiredObject("value")
                .requiredId("value.approvalId")
                .requiredBoolean("value.approved")
                .optionalString("value.feedback")
                .invalid("value.feedback", "over 10,000 characters", "\"" + "x".repeat(10_001) + "\"")
                .refusedBy(text -> AguiTesting.ws().decode(text));
    }

    @Test
    void anyOtherTypedMessageOnTheWebSocketGetsUnknownType() {
        GatewayError error = failure(AguiTesting.ws(), "{\"type\":\"user_message\",\"content\":\"hi\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.details()).isEqualTo(Map.of("type", "user_message"));
        assertThat(error.message()).contains("user_message", "agora:tool_approval_response");
    }

    @Test
    void customEventWithAnotherNameGetsUnknownType() {
        GatewayError error = failure(AguiTesting.ws(), "{\"type\":\"CUSTOM\",\"name\":\"agora:error\",\"value\":{}}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.details()).isEqualTo(Map.of("type", "CUSTOM", "name", "agora:error"));
    }

    @Test
    void longUnknownTypeIsCutShortInTheError() {
        GatewayError error = failure(AguiTesting.ws(), "{\"type\":\"" + "T".repeat(500) + "\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.details().get("type")).hasSize(65).endsWith("…");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"threadId\":\"t1\"}", "{\"threadId\":\"t1\",\"messages\":null}"})
    void profileInputWithoutMessagesGetsMissingField(String text) {
        GatewayError error = failure(AguiTesting.ws(), text);

        assertThat(error.code()).isEqualTo(ErrorCode.MISSING_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "messages"));
    }

    // ---- official 1.0 (HTTP) ----------------------------------------------------------------

    @Test
    void officialInputWithEveryMessageRoleDecodesToStartRun() {
        Command.StartRun run = startRun(AguiTesting.http(), fixture("official_run_agent_input.json"));

        assertThat(run.conversationId()).isEqualTo("thread-1");
        assertThat(run.runId()).isEqualTo("run-2");
        assertThat(run.parentRunId()).isEqualTo("run-1");
        assertThat(run.messages()).containsExactly(
                new InputMessage("m-dev", Role.DEVELOPER, "Answer in Dutch when asked in Dutch.", List.of(), null, null),
                new InputMessage("m-sys", Role.SYSTEM, "You are a food safety inspector's assistant.", List.of(), null,
                        "policy"),
                new InputMessage("m-user-1", Role.USER, "Search the storage rules.", List.of(), null, "inspector"),
                new InputMessage("m-asst-1", Role.ASSISTANT, "",
                        List.of(new ToolCallRef("call-1", "search_regulations", "{\"query\":\"storage\"}")), null, null),
                new InputMessage("m-tool-1", Role.TOOL, "Found 5 relevant regulations", List.of(), "call-1", null),
                new InputMessage("m-asst-2", Role.ASSISTANT, "I found 5 regulations.", List.of(), null, null),
                new InputMessage("m-user-2", Role.USER, "What does this label say? Is it compliant?", List.of(), null,
                        null));
        assertThat(run.tools()).hasSize(2);
        assertThat(run.tools().get(0).name()).isEqualTo("generate_inspection_report");
        assertThat(run.tools().get(0).description()).isEqualTo("Generates official PDF inspection report");
        assertThat(run.tools().get(0).parameters()).isEqualTo(json("""
                {"type":"object","properties":{"inspection_id":{"type":"string"}},"required":["inspection_id"]}"""));
        assertThat(run.tools().get(1).parameters()).isEqualTo(Json.object());
        assertThat(run.context()).isEqualTo(json("[{\"description\":\"establishment\",\"value\":\"Restaurant De Gouden Leeuw\"}]"));
        assertThat(run.state()).isEqualTo(json("{\"inspectionId\":\"INS-2024-001\",\"step\":3}"));
        assertThat(run.forwardedProps()).isEqualTo(json("{\"locale\":\"nl-NL\"}"));
        assertThat(run.metadata()).isNull();
    }

    @Test
    void reasoningAndActivityMessagesAreAcceptedButNotPassedOn() {
        Command.StartRun run = startRun(AguiTesting.http(), fixture("official_run_agent_input.json"));

        assertThat(run.messages()).extracting(InputMessage::id).doesNotContain("m-reason-1", "m-act-1");
    }

    @Test
    void resumeDecodesToSubscribeThenResumeOfEveryDecision() {
        List<Command> commands = commands(AguiTesting.http(), fixture("official_resume_input.json"));

        assertThat(commands).containsExactly(
                new Command.Subscribe("thread-1", -1, false),
                new Command.Resume("thread-1", List.of(
                        new Command.DecideApproval("appr-1", true, "Go ahead",
                                json("{\"approved\":true,\"feedback\":\"Go ahead\"}")),
                        new Command.DecideApproval("appr-2", false, null, null),
                        new Command.DecideApproval("appr-3", false, "Not yet", json("{\"comment\":\"Not yet\"}")),
                        new Command.DecideApproval("appr-4", false, "Wrong establishment",
                                json("{\"approved\":false,\"feedback\":\"Wrong establishment\"}")))));
    }

    @Test
    void cancelledInterruptIsRejectedEvenWithAnApprovingPayload() {
        List<Command> commands = commands(AguiTesting.http(), with("resume",
                "[{\"interruptId\":\"a1\",\"status\":\"cancelled\",\"payload\":{\"approved\":true}}]"));

        assertThat(((Command.Resume) commands.get(1)).decisions().get(0).approved()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"true", "\"yes\"", "{\"approved\":\"true\"}", "{\"approved\":1}", "[true]"})
    void resolvedInterruptApprovesOnlyWithAnApprovedTruePayload(String payload) {
        List<Command> commands = commands(AguiTesting.http(), with("resume",
                "[{\"interruptId\":\"a1\",\"status\":\"resolved\",\"payload\":" + payload + "}]"));

        assertThat(((Command.Resume) commands.get(1)).decisions().get(0).approved()).isFalse();
    }

    @Test
    void emptyResumeStartsAnOrdinaryRun() {
        assertThat(startRun(AguiTesting.http(), with("resume", "[]")).runId()).isEqualTo("r1");
    }

    @Test
    void optionalFieldsSentAsNullCountAsAbsent() {
        Command.StartRun run = startRun(AguiTesting.http(), "{\"threadId\":\"t1\",\"runId\":\"r1\",\"parentRunId\":null,"
                + "\"state\":null,\"tools\":null,\"context\":null,\"forwardedProps\":null,\"resume\":null,"
                + "\"messages\":[{\"id\":\"m1\",\"role\":\"assistant\",\"content\":null,\"toolCalls\":null,\"name\":null}]}");

        assertThat(run.parentRunId()).isNull();
        assertThat(run.state()).isNull();
        assertThat(run.tools()).isEmpty();
        assertThat(run.context()).isNull();
        assertThat(run.forwardedProps()).isNull();
        assertThat(run.messages()).containsExactly(InputMessage.text("m1", Role.ASSISTANT, ""));
    }

    @Test
    void stateAndForwardedPropsMayBeAnyJsonValue() {
        Command.StartRun run = startRun(AguiTesting.http(), "{\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":[],"
                + "\"state\":[1,2],\"forwardedProps\":\"x\"}");

        assertThat(run.state()).isEqualTo(json("[1,2]"));
        assertThat(run.forwardedProps()).isEqualTo(json("\"x\""));
    }

    @Test
    void typeFieldIsNotSpecialOnHttp() {
        GatewayError error = failure(AguiTesting.http(), fixture("tool_approval_response.json"));

        assertThat(error.code()).isEqualTo(ErrorCode.MISSING_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "threadId"));
    }

    @TestFactory
    Stream<DynamicTest> badOfficialInputIsRefusedNamingTheField() {
        return FieldCases.in(MINIMAL)
                .requiredId("threadId")
                .requiredId("runId")
                .requiredArray("messages")
                .optionalString("parentRunId")
                .optionalString("protocolVersion")
                .invalid("messages[0]", "a string", "\"hi\"")
                .requiredString("messages[0].role")
                .invalid("messages[0].role", "unknown", "\"robot\"")
                .requiredString("messages[0].id")
                .optionalString("messages[0].name")
                .optionalArray("tools")
                .optionalArray("context")
                .optionalArray("resume")
                .row("user without content", withMessage("{\"id\":\"m1\",\"role\":\"user\"}"),
                        ErrorCode.MISSING_FIELD, "messages[0].content")
                .row("numeric user content", withMessage("{\"id\":\"m1\",\"role\":\"user\",\"content\":5}"),
                        ErrorCode.INVALID_FIELD, "messages[0].content")
                .row("content part not an object",
                        withMessage("{\"id\":\"m1\",\"role\":\"user\",\"content\":[\"hi\"]}"),
                        ErrorCode.INVALID_FIELD, "messages[0].content[0]")
                .row("content part without type",
                        withMessage("{\"id\":\"m1\",\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}"),
                        ErrorCode.MISSING_FIELD, "messages[0].content[0].type")
                .row("text part without text",
                        withMessage("{\"id\":\"m1\",\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}"),
                        ErrorCode.MISSING_FIELD, "messages[0].content[0].text")
                .row("system without content", withMessage("{\"id\":\"m1\",\"role\":\"system\"}"),
                        ErrorCode.MISSING_FIELD, "messages[0].content")
                .row("developer content parts",
                        withMessage("{\"id\":\"m1\",\"role\":\"developer\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}"),
                        ErrorCode.INVALID_FIELD, "messages[0].content")
                .row("numeric assistant content",
                        withMessage("{\"id\":\"m1\",\"role\":\"assistant\",\"content\":1}"),
                        ErrorCode.INVALID_FIELD, "messages[0].content")
                .row("toolCalls object",
                        withMessage("{\"id\":\"m1\",\"role\":\"assistant\",\"toolCalls\":{}}"),
                        ErrorCode.INVALID_FIELD, "messages[0].toolCalls")
                .row("tool call of another type", withMessage("{\"id\":\"m1\",\"role\":\"assistant\",\"toolCalls\":"
                        + "[{\"id\":\"c1\",\"type\":\"web\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}"),
                        ErrorCode.INVALID_FIELD, "messages[0].toolCalls[0].type")
                .row("tool call without function", withMessage("{\"id\":\"m1\",\"role\":\"assistant\",\"toolCalls\":"
                        + "[{\"id\":\"c1\",\"type\":\"function\"}]}"),
                        ErrorCode.MISSING_FIELD, "messages[0].toolCalls[0].function")
                .row("tool call arguments as an object", withMessage("{\"id\":\"m1\",\"role\":\"assistant\","
                        + "\"toolCalls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":{}}}]}"),
                        ErrorCode.INVALID_FIELD, "messages[0].toolCalls[0].function.arguments")
                .row("tool message without toolCallId",
                        withMessage("{\"id\":\"m1\",\"role\":\"tool\",\"content\":\"ok\"}"),
                        ErrorCode.MISSING_FIELD, "messages[0].toolCallId")
                .row("tool message without content",
                        withMessage("{\"id\":\"m1\",\"role\":\"tool\",\"toolCallId\":\"c1\"}"),
                        ErrorCode.MISSING_FIELD, "messages[0].content")
                .row("activity with array content", withMessage(
                        "{\"id\":\"m1\",\"role\":\"activity\",\"activityType\":\"p\",\"content\":[]}"),
                        ErrorCode.INVALID_FIELD, "messages[0].content")
                .row("activity without type",
                        withMessage("{\"id\":\"m1\",\"role\":\"activity\",\"content\":{}}"),
                        ErrorCode.MISSING_FIELD, "messages[0].activityType")
                .row("tool without name", with("tools", "[{\"description\":\"d\"}]"),
                        ErrorCode.MISSING_FIELD, "tools[0].name")
                .row("tool without description", with("tools", "[{\"name\":\"n\"}]"),
                        ErrorCode.MISSING_FIELD, "tools[0].description")
                .row("context item without value", with("context", "[{\"description\":\"d\"}]"),
                        ErrorCode.MISSING_FIELD, "context[0].value")
                .row("context value object", with("context", "[{\"description\":\"d\",\"value\":{}}]"),
                        ErrorCode.INVALID_FIELD, "context[0].value")
                .row("resume without interruptId", with("resume", "[{\"status\":\"resolved\"}]"),
                        ErrorCode.MISSING_FIELD, "resume[0].interruptId")
                .row("resume without status", with("resume", "[{\"interruptId\":\"a1\"}]"),
                        ErrorCode.MISSING_FIELD, "resume[0].status")
                .row("resume status approved", with("resume", "[{\"interruptId\":\"a1\",\"status\":\"approved\"}]"),
                        ErrorCode.INVALID_FIELD, "resume[0].status")
                .refusedBy(text -> AguiTesting.http().decode(text));
    }

    @Test
    void officialInputMustCarryARunIdMessageIdsToolDescriptionsAndAContextList() {
        AguiTesting http = AguiTesting.http();

        assertThat(failure(http, fixture("run_agent_input.json")).details()).isEqualTo(Map.of("field", "messages[0].id"));
        assertThat(failure(http, "{\"threadId\":\"t1\",\"messages\":[]}").details()).isEqualTo(Map.of("field", "runId"));
    }

    // ---- content length -----------------------------------------------------------------------

    static Stream<Arguments> oversizeContent() {
        String big = "\"" + "a".repeat(10_001) + "\"";
        return Stream.of(
                Arguments.of("user string", "{\"id\":\"m\",\"role\":\"user\",\"content\":" + big + "}"),
                Arguments.of("user text parts joined", "{\"id\":\"m\",\"role\":\"user\",\"content\":["
                        + "{\"type\":\"text\",\"text\":\"" + "a".repeat(5_000) + "\"},"
                        + "{\"type\":\"text\",\"text\":\"" + "a".repeat(5_001) + "\"}]}"));
    }

    /** Resent history: an agent's long answer or tool result is not a person's message. */
    static Stream<Arguments> longHistory() {
        String big = "\"" + "a".repeat(10_001) + "\"";
        return Stream.of(
                Arguments.of("assistant", "{\"id\":\"m\",\"role\":\"assistant\",\"content\":" + big + "}"),
                Arguments.of("system", "{\"id\":\"m\",\"role\":\"system\",\"content\":" + big + "}"),
                Arguments.of("developer", "{\"id\":\"m\",\"role\":\"developer\",\"content\":" + big + "}"),
                Arguments.of("tool", "{\"id\":\"m\",\"role\":\"tool\",\"toolCallId\":\"c\",\"content\":" + big + "}"),
                Arguments.of("reasoning", "{\"id\":\"m\",\"role\":\"reasoning\",\"content\":" + big + "}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("longHistory")
    void historyMessagesLongerThanTheUserLimitAreAccepted(String name, String message) {
        for (AguiTesting side : List.of(AguiTesting.http(), AguiTesting.ws())) {
            Decoded decoded = side.decode(withMessage(message));
            assertThat(decoded).as(name).isInstanceOf(Decoded.Commands.class);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oversizeContent")
    void userContentOverTheLimitIsRefused(String name, String message) {
        for (AguiTesting side : List.of(AguiTesting.http(), AguiTesting.ws())) {
            GatewayError error = failure(side, withMessage(message));

            assertThat(error.code()).isEqualTo(ErrorCode.INVALID_FIELD);
            assertThat(error.details()).isEqualTo(Map.of("field", "messages[0].content"));
            assertThat(error.message()).contains("10000");
        }
    }

    @Test
    void contentOfExactlyTheLimitIsAcceptedCountingCodePoints() {
        String emoji = "\uD83D\uDE00".repeat(10_000);

        Command.StartRun run = startRun(AguiTesting.http(),
                withMessage("{\"id\":\"m\",\"role\":\"user\",\"content\":\"" + emoji + "\"}"));

        assertThat(run.messages().get(0).content()).isEqualTo(emoji);
    }

    @Test
    void contentLimitComesFromTheAdapterContext() {
        GatewayError error = failure(AguiTesting.http(new AdapterContext(5)),
                withMessage("{\"id\":\"m\",\"role\":\"user\",\"content\":\"abcdef\"}"));

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_FIELD);
        assertThat(error.message()).isEqualTo("messages[0].content must be at most 5 characters");
    }

    // ---- not JSON -----------------------------------------------------------------------------

    static Stream<Arguments> notJsonObjects() {
        return Stream.concat(MalformedJson.notJson(MINIMAL), MalformedJson.notObjects(MINIMAL));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notJsonObjects")
    void anythingButOneJsonObjectGetsInvalidJsonOnBothTransports(String name, String text) {
        assertThat(failure(AguiTesting.http(), text).code()).isEqualTo(ErrorCode.INVALID_JSON);
        assertThat(failure(AguiTesting.ws(), text).code()).isEqualTo(ErrorCode.INVALID_JSON);
    }
}
