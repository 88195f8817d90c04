package dev.switchboard.adapter.hai;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.stream.Stream;

import static dev.switchboard.adapter.hai.HaiTesting.fixture;
import static org.assertj.core.api.Assertions.assertThat;

class HaiDecoderTest {
    private final HaiTesting hai = new HaiTesting();

    private Command decodeOne(String text) {
        Decoded decoded = hai.session().decode(text);
        assertThat(decoded).isInstanceOf(Decoded.Commands.class);
        assertThat(((Decoded.Commands) decoded).commands()).hasSize(1);
        return ((Decoded.Commands) decoded).commands().get(0);
    }

    private GatewayError failure(String text) {
        Decoded decoded = hai.session().decode(text);
        assertThat(decoded).isInstanceOf(Decoded.Failure.class);
        return ((Decoded.Failure) decoded).error();
    }

    private static String userMessage(String fields) {
        return "{\"type\":\"user_message\"" + (fields.isEmpty() ? "" : "," + fields) + "}";
    }

    private static String approval(String fields) {
        return "{\"type\":\"tool_approval_response\"" + (fields.isEmpty() ? "" : "," + fields) + "}";
    }

    @Test
    void specUserMessageDecodesToStartRunWithGeneratedIds() {
        Command.StartRun run = (Command.StartRun) decodeOne(fixture("user_message.json"));

        assertThat(run.conversationId()).isEqualTo("123e4567-e89b-12d3-a456-426614174000");
        assertThat(run.runId()).startsWith("run_");
        assertThat(run.parentRunId()).isNull();
        assertThat(run.messages()).singleElement().satisfies(m -> {
            assertThat(m.id()).startsWith("msg_");
            assertThat(m.role()).isEqualTo(Role.USER);
            assertThat(m.content()).isEqualTo("What are the regulations for food storage?");
            assertThat(m.toolCalls()).isEmpty();
            assertThat(m.toolCallId()).isNull();
        });
        assertThat(run.tools()).isEmpty();
        assertThat(run.context()).isNull();
        assertThat(run.state()).isNull();
        assertThat(run.forwardedProps()).isNull();
        assertThat(run.metadata()).isEqualTo(Json.object());
    }

    @Test
    void userMessageWithoutMetadataHasNullMetadata() {
        Command.StartRun run = (Command.StartRun) decodeOne(fixture("user_message_test_session.json"));

        assertThat(run.conversationId()).isEqualTo("test-123");
        assertThat(run.messages().get(0).content()).isEqualTo("Hello!");
        assertThat(run.metadata()).isNull();
    }

    @Test
    void metadataIsPassedThroughWhole() {
        Command.StartRun run = (Command.StartRun) decodeOne(
                userMessage("\"content\":\"hi\",\"session_id\":\"s\",\"metadata\":{\"stream\":false,\"lang\":\"nl\"}"));

        assertThat(run.metadata()).isEqualTo(HaiTesting.json("{\"stream\":false,\"lang\":\"nl\"}"));
    }

    @Test
    void metadataSentAsNullCountsAsAbsent() {
        Command.StartRun run = (Command.StartRun) decodeOne(
                userMessage("\"content\":\"hi\",\"session_id\":\"s\",\"metadata\":null"));

        assertThat(run.metadata()).isNull();
    }

    @Test
    void everyUserMessageStartsADistinctRunWithADistinctMessage() {
        String text = fixture("user_message.json");
        Command.StartRun first = (Command.StartRun) decodeOne(text);
        Command.StartRun second = (Command.StartRun) decodeOne(text);

        assertThat(first.runId()).isNotEqualTo(second.runId());
        assertThat(first.messages().get(0).id()).isNotEqualTo(second.messages().get(0).id());
    }

    @Test
    void specApprovedResponseDecodesToDecideApproval() {
        assertThat(decodeOne(fixture("tool_approval_response_approved.json"))).isEqualTo(new Command.DecideApproval(
                "appr_abc123", true, "Looks good, proceed with report generation", null));
    }

    @Test
    void specRejectedResponseDecodesToDecideApproval() {
        assertThat(decodeOne(fixture("tool_approval_response_rejected.json"))).isEqualTo(new Command.DecideApproval(
                "appr_abc123", false, "I need to add more inspection details first", null));
    }

    @Test
    void approvalResponseWithoutFeedbackHasNullFeedback() {
        assertThat(decodeOne(approval("\"approval_id\":\"a1\",\"approved\":false")))
                .isEqualTo(new Command.DecideApproval("a1", false, null, null));
    }

    @Test
    void contentOfTenThousandCharactersIsAccepted() {
        Command.StartRun run = (Command.StartRun) decodeOne(
                userMessage("\"content\":\"" + "a".repeat(10_000) + "\",\"session_id\":\"s\""));

        assertThat(run.messages().get(0).content()).hasSize(10_000);
    }

    @Test
    void contentLengthCountsCodePointsNotUtf16Units() {
        String tenThousandEmoji = "\uD83D\uDE00".repeat(10_000);

        Command.StartRun run = (Command.StartRun) decodeOne(
                userMessage("\"content\":\"" + tenThousandEmoji + "\",\"session_id\":\"s\""));

        assertThat(run.messages().get(0).content()).isEqualTo(tenThousandEmoji);
    }

    @Test
    void sessionIdOfOneHundredTwentyEightCharactersIsAccepted() {
        String id = "s".repeat(128);

        assertThat(((Command.StartRun) decodeOne(userMessage("\"content\":\"hi\",\"session_id\":\"" + id + "\"")))
                .conversationId()).isEqualTo(id);
    }

    @Test
    void contentLimitComesFromTheAdapterContext() {
        HaiTesting small = new HaiTesting(new AdapterContext(5));

        Decoded decoded = small.session().decode(userMessage("\"content\":\"abcdef\",\"session_id\":\"s\""));

        assertThat(decoded).isInstanceOfSatisfying(Decoded.Failure.class, f -> {
            assertThat(f.error().code()).isEqualTo(ErrorCode.INVALID_FIELD);
            assertThat(f.error().message()).contains("content", "5");
        });
    }

    static Stream<Arguments> notJson() {
        return Stream.of(
                Arguments.of("plain text", "hello"),
                Arguments.of("an empty frame", ""),
                Arguments.of("only white space", "   "),
                Arguments.of("a truncated object", "{\"type\":\"user_message\","),
                Arguments.of("an object followed by garbage", "{\"type\":\"user_message\"} trailing"),
                Arguments.of("two objects", "{\"type\":\"user_message\"}{\"type\":\"user_message\"}"),
                Arguments.of("nesting deeper than the read constraints", "[".repeat(65) + "]".repeat(65)),
                Arguments.of("a number longer than the read constraints",
                        "{\"type\":\"user_message\",\"n\":" + "9".repeat(101) + "}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notJson")
    void malformedJsonGetsInvalidJson(String name, String text) {
        assertThat(failure(text).code()).isEqualTo(ErrorCode.INVALID_JSON);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nonObjects")
    void jsonThatIsNotAnObjectGetsInvalidJson(String text) {
        GatewayError error = failure(text);

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_JSON);
        assertThat(error.message()).isEqualTo("a HAI message is a JSON object");
    }

    static Stream<String> nonObjects() {
        return Stream.of("[{\"type\":\"user_message\"}]", "\"user_message\"", "42", "true", "null");
    }

    @Test
    void missingTypeGetsMissingField() {
        GatewayError error = failure("{\"content\":\"hi\",\"session_id\":\"s\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.MISSING_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "type"));
    }

    @Test
    void typeThatIsNotAStringGetsInvalidField() {
        GatewayError error = failure("{\"type\":7}");

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_FIELD);
        assertThat(error.details()).isEqualTo(Map.of("field", "type"));
    }

    @ParameterizedTest(name = "type \"{0}\"")
    @MethodSource("unknownTypes")
    void unknownTypeGetsUnknownMessageTypeErrorNamingTheType(String type) {
        GatewayError error = failure("{\"type\":\"" + type + "\",\"session_id\":\"s\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.message()).contains("\"" + type + "\"");
        assertThat(error.details()).containsEntry("type", type);
    }

    static Stream<String> unknownTypes() {
        return Stream.of("status", "assistant_message", "assistant_message_chunk", "tool_call",
                "tool_approval_request", "error", "User_Message", "");
    }

    @Test
    void veryLongUnknownTypeIsShortenedWhenEchoed() {
        GatewayError error = failure("{\"type\":\"" + "\uD83D\uDE00".repeat(1000) + "\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.details().get("type")).isEqualTo("\uD83D\uDE00".repeat(64) + "…");
    }

    static Stream<Arguments> badUserMessages() {
        String session = "\"session_id\":\"s\"";
        String content = "\"content\":\"hi\"";
        return Stream.of(
                Arguments.of("content missing", session, ErrorCode.MISSING_FIELD, "content"),
                Arguments.of("content null", "\"content\":null," + session, ErrorCode.MISSING_FIELD, "content"),
                Arguments.of("content a number", "\"content\":5," + session, ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content an object", "\"content\":{}," + session, ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content empty", "\"content\":\"\"," + session, ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content blank", "\"content\":\" \\n\\t \"," + session,
                        ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content only no-break spaces", "\"content\":\"\\u00a0\\u2003\"," + session,
                        ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content over 10,000 characters",
                        "\"content\":\"" + "a".repeat(10_001) + "\"," + session, ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("session_id missing", content, ErrorCode.MISSING_FIELD, "session_id"),
                Arguments.of("session_id null", content + ",\"session_id\":null",
                        ErrorCode.MISSING_FIELD, "session_id"),
                Arguments.of("session_id empty", content + ",\"session_id\":\"\"",
                        ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("session_id a number", content + ",\"session_id\":123",
                        ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("session_id over 128 characters", content + ",\"session_id\":\"" + "s".repeat(129) + "\"",
                        ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("metadata an array", content + "," + session + ",\"metadata\":[]",
                        ErrorCode.INVALID_FIELD, "metadata"),
                Arguments.of("metadata a string", content + "," + session + ",\"metadata\":\"x\"",
                        ErrorCode.INVALID_FIELD, "metadata"),
                Arguments.of("metadata.stream a string", content + "," + session + ",\"metadata\":{\"stream\":\"no\"}",
                        ErrorCode.INVALID_FIELD, "metadata.stream"),
                Arguments.of("metadata.stream a number", content + "," + session + ",\"metadata\":{\"stream\":0}",
                        ErrorCode.INVALID_FIELD, "metadata.stream"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badUserMessages")
    void badUserMessageGetsFieldErrorNamingTheField(String name, String fields, ErrorCode code, String field) {
        GatewayError error = failure(userMessage(fields));

        assertThat(error.code()).isEqualTo(code);
        assertThat(error.details()).isEqualTo(Map.of("field", field));
        assertThat(error.message()).startsWith(field + " ");
    }

    static Stream<Arguments> badApprovalResponses() {
        String id = "\"approval_id\":\"a1\"";
        String approved = "\"approved\":true";
        return Stream.of(
                Arguments.of("approval_id missing", approved, ErrorCode.MISSING_FIELD, "approval_id"),
                Arguments.of("approval_id empty", "\"approval_id\":\"\"," + approved,
                        ErrorCode.INVALID_FIELD, "approval_id"),
                Arguments.of("approval_id a number", "\"approval_id\":1," + approved,
                        ErrorCode.INVALID_FIELD, "approval_id"),
                Arguments.of("approved missing", id, ErrorCode.MISSING_FIELD, "approved"),
                Arguments.of("approved a string", id + ",\"approved\":\"true\"", ErrorCode.INVALID_FIELD, "approved"),
                Arguments.of("approved a number", id + ",\"approved\":1", ErrorCode.INVALID_FIELD, "approved"),
                Arguments.of("feedback a number", id + "," + approved + ",\"feedback\":3",
                        ErrorCode.INVALID_FIELD, "feedback"),
                Arguments.of("feedback over 10,000 characters",
                        id + "," + approved + ",\"feedback\":\"" + "f".repeat(10_001) + "\"",
                        ErrorCode.INVALID_FIELD, "feedback"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badApprovalResponses")
    void badApprovalResponseGetsFieldErrorNamingTheField(String name, String fields, ErrorCode code, String field) {
        GatewayError error = failure(approval(fields));

        assertThat(error.code()).isEqualTo(code);
        assertThat(error.details()).isEqualTo(Map.of("field", field));
        assertThat(error.message()).startsWith(field + " ");
    }
}
