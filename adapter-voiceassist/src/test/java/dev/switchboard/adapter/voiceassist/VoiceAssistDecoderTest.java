package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
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

import java.util.Map;
import java.util.stream.Stream;

import static dev.switchboard.adapter.voiceassist.VoiceAssistTesting.CONVERSATION;
import static dev.switchboard.testkit.DialectChecks.assertLongUnknownTypeIsShortenedWhenEchoed;
import static dev.switchboard.testkit.Fixtures.fixture;
import static dev.switchboard.testkit.Fixtures.json;
import static dev.switchboard.testkit.RunChecks.assertOneUserMessageRun;
import static org.assertj.core.api.Assertions.assertThat;

class VoiceAssistDecoderTest {
    private static final String PING = "{\"type\":\"ping\"}";

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
        assertOneUserMessageRun(run, "What are the symptoms of hypertension?");
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

    @TestFactory
    Stream<DynamicTest> anythingButOneJsonObjectGetsInvalidJson() {
        return MalformedJson.refusedBy(PING, "a VoiceAssist message is a JSON object", voice::decode);
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
        assertLongUnknownTypeIsShortenedWhenEchoed(voice.session());
    }

    @TestFactory
    Stream<DynamicTest> badMessageIsRefusedNamingTheField() {
        return FieldCases.in(message("\"content\":\"hi\""))
                .requiredId("content")
                .row("content missing beside a session_id", message("\"session_id\":\"s\""),
                        ErrorCode.MISSING_FIELD, "content")
                .invalid("content", "blank", "\" \\n\\t \"")
                .invalid("content", "only no-break spaces", "\"\\u00a0\\u2003\"")
                .invalid("content", "over 10,000 characters", "\"" + "a".repeat(10_001) + "\"")
                .optionalId("session_id")
                .invalid("session_id", "blank", "\"  \"")
                .invalid("session_id", "over 128 characters", "\"" + "s".repeat(129) + "\"")
                .optionalId("clinical_context_id")
                .invalid("clinical_context_id", "over 128 characters", "\"" + "c".repeat(129) + "\"")
                .refusedBy(text -> new VoiceAssistTesting(AdapterContext.defaults(), "url-conversation").decode(text));
    }

    @Test
    void aRefusedMessageLeavesTheSessionUsable() {
        failure(message("\"content\":\"\""));

        assertThat(startRun(message("\"content\":\"hi\"")).messages().get(0).content()).isEqualTo("hi");
        assertThat(decodeOne(fixture("ping.json"))).isEqualTo(new Command.Ping());
    }
}
