package dev.switchboard.core;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class EventCodecTest {
    private static final List<Event> ONE_OF_EACH = List.of(
            new Event.RunStarted("run-0"),
            new Event.StepStarted("thinking"),
            new Event.StepFinished("thinking"),
            new Event.MessageStarted("m1", Role.ASSISTANT),
            new Event.TextDelta("m1", "Hi"),
            new Event.MessageCompleted("m1", "Hi", List.of(new Citation("c1", "regulation", "Reg", "https://x", 3))),
            new Event.ReasoningStarted("r1"),
            new Event.ReasoningDelta("r1", "Because"),
            new Event.ReasoningCompleted("r1", "Because"),
            new Event.ToolCallStarted("call-1", "search", "m1"),
            new Event.ToolCallArgs("call-1", "{\"q\":1}"),
            new Event.ToolCallCompleted("call-1", "search", Json.object().put("q", 1)),
            new Event.ToolResult("call-1", "search", Json.object().put("q", 1), true, "found", "m2"),
            new Event.ApprovalRequested("appr-1", "call-2", "order", "Orders", Json.object(), "why", RiskLevel.HIGH),
            new Event.ApprovalResolved("appr-1", false, "no", "alice"),
            new Event.StateSnapshot(Json.object().put("a", 1)),
            new Event.StateDelta(Json.MAPPER.createArrayNode()),
            new Event.Custom("progress", Json.object().put("pct", 5)),
            new Event.Usage("gpt-x", 120, 30, 4L, null),
            new Event.RunFinished(),
            new Event.RunFailed(ErrorCode.UPSTREAM_FAILED, "gone"));

    @Test
    void everyEventKindSurvivesTheStoreForm() {
        Set<Event.Kind> seen = EnumSet.noneOf(Event.Kind.class);
        for (Event e : ONE_OF_EACH) {
            assertThat(EventCodec.fromJson(EventCodec.toJson(e))).isEqualTo(e);
            seen.add(e.kind());
        }
        assertThat(seen).containsExactlyInAnyOrder(Event.Kind.values());
    }

    @Test
    void usageIsWrittenWithItsCountsAndNotItsTotal() {
        assertThat(EventCodec.toJson(new Event.Usage("gpt-x", 120, 30, null, 8L))).isEqualTo(
                "{\"type\":\"usage\",\"model\":\"gpt-x\",\"inputTokens\":120,\"outputTokens\":30,"
                        + "\"reasoningTokens\":null,\"cachedInputTokens\":8}");
        assertThat(new Event.Usage("gpt-x", 120, 30, null, 8L).totalTokens()).isEqualTo(150);
    }
}
