package dev.switchboard.adapter.hai;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.testkit.FieldCases;
import dev.switchboard.testkit.MalformedJson;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.stream.Stream;

import static dev.switchboard.testkit.DialectChecks.assertLongUnknownTypeIsShortenedWhenEchoed;
import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static dev.switchboard.testkit.RunChecks.assertOneUserMessageRun;
import static org.assertj.core.api.Assertions.assertThat;

class HaiDecoderTest {
    private static final String USER_MESSAGE = "{\"type\":\"user_message\",\"content\":\"hi\",\"session_id\":\"s\"}";
    private static final String APPROVAL = "{\"type\":\"tool_approval_response\",\"approval_id\":\"a1\",\"approved\":true}";

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
        assertOneUserMessageRun(run, "What are the regulations for food storage?");
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

        assertThat(run.metadata()).isEqualTo(json("{\"stream\":false,\"lang\":\"nl\"}"));
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

    @TestFactory
    Stream<DynamicTest> anythingButOneJsonObjectGetsInvalidJson() {
        return MalformedJson.refusedBy(USER_MESSAGE, "a HAI message is a JSON object", hai::decode);
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
        assertLongUnknownTypeIsShortenedWhenEchoed(hai.session());
    }

    @TestFactory
    Stream<DynamicTest> badUserMessageGetsFieldErrorNamingTheField() {
        return FieldCases.in(USER_MESSAGE)
                .requiredId("content")
                .invalid("content", "blank", "\" \\n\\t \"")
                .invalid("content", "only no-break spaces", "\"\\u00a0\\u2003\"")
                .invalid("content", "over 10,000 characters", "\"" + "a".repeat(10_001) + "\"")
                .requiredId("session_id")
                .invalid("session_id", "over 128 characters", "\"" + "s".repeat(129) + "\"")
                .optionalObject("metadata")
                .optionalBoolean("metadata.stream")
                .refusedBy(text -> new HaiTesting().decode(text));
    }

    @TestFactory
    Stream<DynamicTest> badApprovalResponseGetsFieldErrorNamingTheField() {
        return FieldCases.in(APPROVAL)
                .requiredId("approval_id")
                .requiredBoolean("approved")
                .optionalString("feedback")
                .invalid("feedback", "over 10,000 characters", "\"" + "f".repeat(10_001) + "\"")
                .refusedBy(text -> new HaiTesting().decode(text));
    }
}
