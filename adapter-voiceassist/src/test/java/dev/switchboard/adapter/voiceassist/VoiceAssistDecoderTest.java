package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.stream.Stream;

import static dev.switchboard.adapter.voiceassist.VoiceAssistTesting.CONVERSATION;
import static dev.switchboard.adapter.voiceassist.VoiceAssistTesting.fixture;
import static dev.switchboard.adapter.voiceassist.VoiceAssistTesting.json;
import static org.assertj.core.api.Assertions.assertThat;

class VoiceAssistDecoderTest {
    /** A connection whose URL names a conversation other than the spec examples' session_id. */
    private final VoiceAssistTesting voice = new VoiceAssistTesting(AdapterContext.defaults(), "url-conversation");

    private Command decodeOne(String text) {
        Decoded decoded = voice.decode(text);
        assertThat(decoded).isInstanceOf(Decoded.Commands.class);
        assertThat(((Decoded.Commands) decoded).commands()).hasSize(1);
        return ((Decoded.Commands) decoded).commands().get(0);
    }

    private Command.StartRun startRun(String text) {
        return (Command.StartRun) decodeOne(text);
    }

    private GatewayError failure(String text) {
        Decoded decoded = voice.decode(text);
        assertThat(decoded).isInstanceOf(Decoded.Failure.class);
        return ((Decoded.Failure) decoded).error();
    }

    private static String message(String fields) {
        return "{\"type\":\"message\"" + (fields.isEmpty() ? "" : "," + fields) + "}";
    }

    @Test
    void specMessageDecodesToStartRunInTheSessionIdConversationWithItsClinicalContext() {
        Command.StartRun run = startRun(fixture("message.json"));

        assertThat(run.conversationId()).isEqualTo(CONVERSATION);
        assertThat(run.runId()).startsWith("run_");
        assertThat(run.parentRunId()).isNull();
        assertThat(run.messages()).singleElement().satisfies(m -> {
            assertThat(m.id()).startsWith("msg_");
            assertThat(m.role()).isEqualTo(Role.USER);
            assertThat(m.content()).isEqualTo("What are the symptoms of hypertension?");
            assertThat(m.toolCalls()).isEmpty();
            assertThat(m.toolCallId()).isNull();
        });
        assertThat(run.tools()).isEmpty();
        assertThat(run.context()).isNull();
        assertThat(run.state()).isNull();
        assertThat(run.forwardedProps()).isNull();
        assertThat(run.metadata()).isEqualTo(json("{\"clinical_context_id\":\"optional-uuid\"}"));
    }

    @Test
    void specExampleWithoutClinicalContextHasNullMetadata() {
        Command.StartRun run = startRun(fixture("message_example.json"));

        assertThat(run.conversationId()).isEqualTo(CONVERSATION);
        assertThat(run.messages().get(0).content()).isEqualTo("The patient has high blood pressure. What should I do?");
        assertThat(run.metadata()).isNull();
    }

    @Test
    void specTestMessageNamesItsOwnConversation() {
        assertThat(startRun(fixture("message_test_session.json")).conversationId()).isEqualTo("test");
    }

    @Test
    void messageWithoutSessionIdGoesToTheUrlConversation() {
        assertThat(startRun(message("\"content\":\"What is hypertension?\"")).conversationId())
                .isEqualTo("url-conversation");
    }

    @Test
    void sessionIdAndClinicalContextIdSentAsNullCountAsAbsent() {
        Command.StartRun run = startRun(message("\"content\":\"hi\",\"session_id\":null,\"clinical_context_id\":null"));

        assertThat(run.conversationId()).isEqualTo("url-conversation");
        assertThat(run.metadata()).isNull();
    }

    @Test
    void clientTimestampAndDataOfTheBaseStructureAreIgnored() {
        Command.StartRun run = startRun(message(
                "\"content\":\"hi\",\"timestamp\":\"2025-11-22T12:34:56.789Z\",\"data\":{}"));

        assertThat(run.messages().get(0).content()).isEqualTo("hi");
        assertThat(run.metadata()).isNull();
    }

    @Test
    void specPingDecodesToPing() {
        assertThat(decodeOne(fixture("ping.json"))).isEqualTo(new Command.Ping());
    }

    @Test
    void pingWithATimestampDecodesToPing() {
        assertThat(decodeOne("{\"type\":\"ping\",\"timestamp\":\"2025-11-22T12:34:56.789Z\"}"))
                .isEqualTo(new Command.Ping());
    }

    @Test
    void everyMessageStartsADistinctRunWithADistinctMessage() {
        Command.StartRun first = startRun(fixture("message.json"));
        Command.StartRun second = startRun(fixture("message.json"));

        assertThat(first.runId()).isNotEqualTo(second.runId());
        assertThat(first.messages().get(0).id()).isNotEqualTo(second.messages().get(0).id());
    }

    @Test
    void contentOfTenThousandCharactersIsAccepted() {
        assertThat(startRun(message("\"content\":\"" + "a".repeat(10_000) + "\"")).messages().get(0).content())
                .hasSize(10_000);
    }

    @Test
    void contentLengthCountsCodePointsNotUtf16Units() {
        String tenThousandEmoji = "\uD83D\uDE00".repeat(10_000);

        assertThat(startRun(message("\"content\":\"" + tenThousandEmoji + "\"")).messages().get(0).content())
                .isEqualTo(tenThousandEmoji);
    }

    @Test
    void contentIsKeptAsSentWithItsSurroundingWhitespace() {
        assertThat(startRun(message("\"content\":\"  hi \\n\"")).messages().get(0).content()).isEqualTo("  hi \n");
    }

    @Test
    void idsOf128CharactersAreAccepted() {
        String id = "\uD83D\uDE00".repeat(128);

        Command.StartRun run = startRun(message(
                "\"content\":\"hi\",\"session_id\":\"" + id + "\",\"clinical_context_id\":\"" + id + "\""));

        assertThat(run.conversationId()).isEqualTo(id);
        assertThat(run.metadata().get("clinical_context_id").textValue()).isEqualTo(id);
    }

    static Stream<Arguments> notJson() {
        return Stream.of(
                Arguments.of("plain text", "hello"),
                Arguments.of("an empty frame", ""),
                Arguments.of("only white space", "   "),
                Arguments.of("a truncated object", "{\"type\":\"message\","),
                Arguments.of("single quotes", "{'type':'ping'}"),
                Arguments.of("an object followed by garbage", "{\"type\":\"ping\"} trailing"),
                Arguments.of("two objects", "{\"type\":\"ping\"}{\"type\":\"ping\"}"),
                Arguments.of("nesting deeper than the read constraints", "[".repeat(65) + "]".repeat(65)),
                Arguments.of("a number longer than the read constraints",
                        "{\"type\":\"ping\",\"n\":" + "9".repeat(101) + "}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notJson")
    void malformedJsonGetsInvalidJson(String name, String text) {
        assertThat(failure(text).code()).isEqualTo(ErrorCode.INVALID_JSON);
    }

    static Stream<String> nonObjects() {
        return Stream.of("[{\"type\":\"ping\"}]", "\"ping\"", "42", "true", "null");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nonObjects")
    void jsonThatIsNotAnObjectGetsInvalidJson(String text) {
        GatewayError error = failure(text);

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_JSON);
        assertThat(error.message()).isEqualTo("a VoiceAssist message is a JSON object");
    }

    static Stream<Arguments> typeMissingOrNotAString() {
        return Stream.of(
                Arguments.of("missing", "{\"content\":\"hi\"}"),
                Arguments.of("null", "{\"type\":null,\"content\":\"hi\"}"),
                Arguments.of("a number", "{\"type\":7}"),
                Arguments.of("an object", "{\"type\":{\"name\":\"message\"}}"),
                Arguments.of("an array", "{\"type\":[\"ping\"]}"));
    }

    @ParameterizedTest(name = "type {0}")
    @MethodSource("typeMissingOrNotAString")
    void typeMissingOrNotAStringGetsUnknownTypeAsTheSpecServerAnswers(String name, String text) {
        GatewayError error = failure(text);

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.details()).isEqualTo(Map.of("field", "type"));
        assertThat(error.message()).contains("message", "ping");
    }

    static Stream<String> unknownTypes() {
        return Stream.of("connected", "message_start", "message_chunk", "message_complete", "error", "pong",
                "user_message", "Message", "PING", "");
    }

    @ParameterizedTest(name = "type \"{0}\"")
    @MethodSource("unknownTypes")
    void unknownTypeGetsUnknownTypeNamingTheType(String type) {
        GatewayError error = failure("{\"type\":\"" + type + "\",\"content\":\"hi\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.message()).contains("\"" + type + "\"");
        assertThat(error.details()).isEqualTo(Map.of("type", type));
    }

    @Test
    void veryLongUnknownTypeIsShortenedWhenEchoed() {
        GatewayError error = failure("{\"type\":\"" + "\uD83D\uDE00".repeat(1000) + "\"}");

        assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(error.details().get("type")).isEqualTo("\uD83D\uDE00".repeat(64) + "…");
    }

    static Stream<Arguments> badMessages() {
        String content = "\"content\":\"hi\"";
        return Stream.of(
                Arguments.of("content missing", "", ErrorCode.MISSING_FIELD, "content"),
                Arguments.of("content missing beside a session_id", "\"session_id\":\"s\"",
                        ErrorCode.MISSING_FIELD, "content"),
                Arguments.of("content null", "\"content\":null", ErrorCode.MISSING_FIELD, "content"),
                Arguments.of("content a number", "\"content\":5", ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content an array", "\"content\":[\"hi\"]", ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content empty", "\"content\":\"\"", ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content blank", "\"content\":\" \\n\\t \"", ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content only no-break spaces", "\"content\":\"\\u00a0\\u2003\"",
                        ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("content over 10,000 characters", "\"content\":\"" + "a".repeat(10_001) + "\"",
                        ErrorCode.INVALID_FIELD, "content"),
                Arguments.of("session_id empty", content + ",\"session_id\":\"\"", ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("session_id blank", content + ",\"session_id\":\"  \"",
                        ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("session_id a number", content + ",\"session_id\":123",
                        ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("session_id over 128 characters", content + ",\"session_id\":\"" + "s".repeat(129) + "\"",
                        ErrorCode.INVALID_FIELD, "session_id"),
                Arguments.of("clinical_context_id empty", content + ",\"clinical_context_id\":\"\"",
                        ErrorCode.INVALID_FIELD, "clinical_context_id"),
                Arguments.of("clinical_context_id an object", content + ",\"clinical_context_id\":{}",
                        ErrorCode.INVALID_FIELD, "clinical_context_id"),
                Arguments.of("clinical_context_id over 128 characters",
                        content + ",\"clinical_context_id\":\"" + "c".repeat(129) + "\"",
                        ErrorCode.INVALID_FIELD, "clinical_context_id"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badMessages")
    void badMessageIsRefusedNamingTheField(String name, String fields, ErrorCode code, String field) {
        GatewayError error = failure(message(fields));

        assertThat(error.code()).isEqualTo(code);
        assertThat(error.details()).isEqualTo(Map.of("field", field));
        assertThat(error.message()).startsWith(field);
    }

    @Test
    void aRefusedMessageLeavesTheSessionUsable() {
        failure(message("\"content\":\"\""));

        assertThat(startRun(message("\"content\":\"hi\"")).messages().get(0).content()).isEqualTo("hi");
        assertThat(decodeOne(fixture("ping.json"))).isEqualTo(new Command.Ping());
    }
}
