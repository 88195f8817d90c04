package dev.switchboard.core;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EventCodecTest {
    private static final ObjectWriter DATABIND = Json.MAPPER.writerFor(Event.class);

    /** Text a generator must escape or pass through as it is: quotes, controls, surrogates. */
    private static final String TRICKY = "\"quoted\" back\\slash /slash\u0000\u0001\b\f\n\r\t\u001f\u007f é ü"
            + " \u2028\u2029 </script> \uD83D\uDE00 lone \uD800 high, lone \uDC00 low, 末尾";

    private static final JsonNode NESTED = nested();

    private static JsonNode nested() {
        ObjectNode root = Json.object();
        root.put("int", 1).put("negative", -7).put("long", 1L << 40)
                .put("big", BigInteger.ONE.shiftLeft(70)).put("double", 1.5).put("tiny", 1e-300)
                .put("true", true).put("false", false).putNull("null").put("text", TRICKY);
        root.putObject("empty");
        root.putArray("none");
        ArrayNode list = root.putArray("list");
        list.add(1).add("two").addNull().addObject().put("deep", Json.object().set("deeper",
                Json.MAPPER.createArrayNode().add(Json.MAPPER.createArrayNode().add(3))));
        root.put(TRICKY, "a key that needs escaping");
        return root;
    }

    /**
     * Events of this kind that read back equal: every field set, every nullable field null (with
     * those a constructor replaces by a default), and the text fields holding {@link #TRICKY}.
     */
    private static List<Event> samples(Event.Kind kind) {
        return switch (kind) {
            case RUN_STARTED -> List.of(new Event.RunStarted("run-0"), new Event.RunStarted(null),
                    new Event.RunStarted(TRICKY));
            case STEP_STARTED -> List.of(new Event.StepStarted("thinking"), new Event.StepStarted(TRICKY));
            case STEP_FINISHED -> List.of(new Event.StepFinished("thinking"), new Event.StepFinished(TRICKY));
            case MESSAGE_STARTED -> List.of(new Event.MessageStarted("m1", Role.ASSISTANT),
                    new Event.MessageStarted(TRICKY, Role.USER), new Event.MessageStarted("m1", Role.SYSTEM),
                    new Event.MessageStarted("m1", Role.DEVELOPER), new Event.MessageStarted("m1", Role.TOOL));
            case TEXT_DELTA -> List.of(new Event.TextDelta("m1", "Hi"), new Event.TextDelta(TRICKY, TRICKY));
            case MESSAGE_COMPLETED -> List.of(
                    new Event.MessageCompleted("m1", "Hi", List.of(
                            new Citation("c1", "regulation", "Reg", "https://x", 3),
                            new Citation("c2", "web", TRICKY, "https://y?q=\"1\"", null))),
                    new Event.MessageCompleted("m1", "", null),
                    new Event.MessageCompleted(TRICKY, TRICKY, List.of()));
            case REASONING_STARTED -> List.of(new Event.ReasoningStarted("r1"), new Event.ReasoningStarted(TRICKY));
            case REASONING_DELTA -> List.of(new Event.ReasoningDelta("r1", "Because"),
                    new Event.ReasoningDelta(TRICKY, TRICKY));
            case REASONING_COMPLETED -> List.of(new Event.ReasoningCompleted("r1", "Because"),
                    new Event.ReasoningCompleted("r1", ""), new Event.ReasoningCompleted(TRICKY, TRICKY));
            case TOOL_CALL_STARTED -> List.of(new Event.ToolCallStarted("call-1", "search", "m1"),
                    new Event.ToolCallStarted("call-1", "search", null),
                    new Event.ToolCallStarted(TRICKY, TRICKY, TRICKY));
            case TOOL_CALL_ARGS -> List.of(new Event.ToolCallArgs("call-1", "{\"q\":1}"),
                    new Event.ToolCallArgs("call-1", ""), new Event.ToolCallArgs(TRICKY, TRICKY));
            case TOOL_CALL_COMPLETED -> List.of(new Event.ToolCallCompleted("call-1", "search", NESTED),
                    new Event.ToolCallCompleted("call-1", "search", null),
                    new Event.ToolCallCompleted(TRICKY, TRICKY, Json.object().put("q", TRICKY)));
            case TOOL_RESULT -> List.of(new Event.ToolResult("call-1", "search", NESTED, true, "found", "m2"),
                    new Event.ToolResult("call-1", "search", null, false, "", "m2"),
                    new Event.ToolResult(TRICKY, TRICKY, Json.object(), true, TRICKY, TRICKY));
            case APPROVAL_REQUESTED -> List.of(
                    new Event.ApprovalRequested("appr-1", "call-2", "order", "Orders", NESTED, "why", RiskLevel.HIGH),
                    new Event.ApprovalRequested("appr-1", "call-2", "order", null, null, null, RiskLevel.LOW),
                    new Event.ApprovalRequested(TRICKY, TRICKY, TRICKY, TRICKY, Json.object(), TRICKY,
                            RiskLevel.MEDIUM),
                    new Event.ApprovalRequested("appr-1", "call-2", "order", "", Json.object(), "",
                            RiskLevel.CRITICAL));
            case APPROVAL_RESOLVED -> List.of(new Event.ApprovalResolved("appr-1", true, "fine", "alice"),
                    new Event.ApprovalResolved("appr-1", false, null, null),
                    new Event.ApprovalResolved(TRICKY, false, TRICKY, TRICKY));
            case STATE_SNAPSHOT -> List.of(new Event.StateSnapshot(NESTED), new Event.StateSnapshot(null),
                    new Event.StateSnapshot(Json.object()));
            case STATE_DELTA -> List.of(
                    new Event.StateDelta(Json.MAPPER.createArrayNode().add(Json.object().put("op", "replace")
                            .put("path", "/step").set("value", NESTED))),
                    new Event.StateDelta(Json.MAPPER.createArrayNode()));
            case CUSTOM -> List.of(new Event.Custom("progress", NESTED), new Event.Custom("progress", null),
                    new Event.Custom(TRICKY, JsonNodeFactory.instance.textNode(TRICKY)),
                    new Event.Custom("n", JsonNodeFactory.instance.numberNode(42)),
                    new Event.Custom("a", Json.MAPPER.createArrayNode().add(NESTED)));
            case USAGE -> List.of(new Event.Usage("gpt-x", 120, 30, 4L, 8L), new Event.Usage("gpt-x", 0, 0, null, null),
                    new Event.Usage(TRICKY, Long.MAX_VALUE, 1, 0L, Long.MAX_VALUE));
            case RUN_FINISHED -> List.of(new Event.RunFinished());
            case RUN_FAILED -> {
                List<Event> failures = new ArrayList<>();
                for (ErrorCode code : ErrorCode.values()) {
                    failures.add(new Event.RunFailed(code, TRICKY));
                }
                failures.add(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, null));
                yield failures;
            }
        };
    }

    @ParameterizedTest
    @EnumSource(Event.Kind.class)
    void everyKindIsWrittenByteForByteAsDatabindWritesItAndReadsBackEqual(Event.Kind kind) throws Exception {
        List<Event> samples = samples(kind);
        assertThat(samples).as("samples of %s", kind).isNotEmpty().allMatch(e -> e.kind() == kind);
        for (Event e : samples) {
            String json = EventCodec.toJson(e);
            assertThat(json).isEqualTo(DATABIND.writeValueAsString(e));
            assertThat(EventCodec.fromJson(json)).isEqualTo(e);
        }
    }

    @Test
    void treeValuesThatDoNotReadBackAsTheSameNodesAreStillWrittenAsDatabindWritesThem() throws Exception {
        ObjectNode numbers = Json.object().put("decimal", new BigDecimal("1E+400")).put("plain", new BigDecimal("0.10"))
                .put("float", 0.1f).put("short", (short) 3).put("nan", Double.NaN)
                .put("binary", new byte[] {0, 1, 2, (byte) 0xff});
        numbers.putPOJO("pojo", List.of("x", 1));
        Event e = new Event.Custom("numbers", numbers);

        assertThat(EventCodec.toJson(e)).isEqualTo(DATABIND.writeValueAsString(e));
    }

    @Test
    void writeAddsOneObjectToTheCallersGeneratorAndLeavesItOpen() throws Exception {
        Event first = new Event.TextDelta("m1", "Hi");
        Event second = new Event.ToolCallCompleted("call-1", "search", NESTED);
        StringWriter out = new StringWriter();
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.writeStartArray();
            EventCodec.write(first, g);
            EventCodec.write(second, g);
            g.writeEndArray();
        }

        assertThat(out.toString())
                .isEqualTo("[" + EventCodec.toJson(first) + "," + EventCodec.toJson(second) + "]");
    }

    @Test
    void anEventThatCannotBeWrittenLeavesTheNextOneWhole() throws Exception {
        JsonNode tooDeep = Json.MAPPER.createArrayNode();
        for (int depth = 0; depth < 1_000; depth++) {
            tooDeep = Json.MAPPER.createArrayNode().add(tooDeep);
        }
        Event unwritable = new Event.Custom("deep", tooDeep);
        Event next = new Event.TextDelta("m1", "Hi");

        assertThatThrownBy(() -> EventCodec.toJson(unwritable)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("CUSTOM");
        assertThat(EventCodec.toJson(next)).isEqualTo(DATABIND.writeValueAsString(next));
    }

    @Test
    void anEventLargerThanTheKeptBufferIsWrittenWholeAndSoIsTheNextOne() throws Exception {
        Event large = new Event.ToolResult("call-1", "search", NESTED, true, TRICKY.repeat(2_000), "m2");
        Event next = new Event.TextDelta("m1", "Hi");

        assertThat(EventCodec.toJson(large)).isEqualTo(DATABIND.writeValueAsString(large));
        assertThat(EventCodec.toJson(next)).isEqualTo(DATABIND.writeValueAsString(next));
    }

    @Test
    void aStoredEventPastTheInboundLimitsReadsBack() {
        // A completed message is the sum of its deltas: it may pass what one inbound value may hold.
        String text = "x".repeat((1 << 20) + 1);
        Event big = new Event.MessageCompleted("m1", text, List.of());
        assertThat(EventCodec.fromJson(EventCodec.toJson(big))).isEqualTo(big);
    }

    @Test
    void rowsWrittenByEarlierReleasesReadBack() {
        assertThat(EventCodec.fromJson("{\"type\":\"message_completed\",\"messageId\":\"m1\",\"text\":\"Hi\","
                + "\"citations\":[{\"id\":\"c1\",\"sourceType\":\"regulation\",\"title\":\"Reg\",\"url\":\"https://x\"}]}"))
                .isEqualTo(new Event.MessageCompleted("m1", "Hi", List.of(new Citation("c1", "regulation", "Reg",
                        "https://x", null))));
        assertThat(EventCodec.fromJson("{\"type\":\"approval_requested\",\"approvalId\":\"a1\",\"toolCallId\":\"c2\","
                + "\"toolName\":\"order\",\"description\":\"Orders\",\"arguments\":{\"n\":2},\"reasoning\":\"why\","
                + "\"risk\":\"high\"}"))
                .isEqualTo(new Event.ApprovalRequested("a1", "c2", "order", "Orders", Json.object().put("n", 2), "why",
                        RiskLevel.HIGH));
        assertThat(EventCodec.fromJson("{\"type\":\"run_failed\",\"code\":\"UPSTREAM_FAILED\",\"message\":\"gone\"}"))
                .isEqualTo(new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "gone"));
    }

    @Test
    void usageIsWrittenWithItsCountsAndNotItsTotal() {
        assertThat(EventCodec.toJson(new Event.Usage("gpt-x", 120, 30, null, 8L))).isEqualTo(
                "{\"type\":\"usage\",\"model\":\"gpt-x\",\"inputTokens\":120,\"outputTokens\":30,"
                        + "\"reasoningTokens\":null,\"cachedInputTokens\":8}");
        assertThat(new Event.Usage("gpt-x", 120, 30, null, 8L).totalTokens()).isEqualTo(150);
    }
}
