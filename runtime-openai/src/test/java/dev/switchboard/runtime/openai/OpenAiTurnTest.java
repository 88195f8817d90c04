package dev.switchboard.runtime.openai;

import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.testing.RecordingRunContext;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OpenAiTurnTest {
    private final RecordingRunContext ctx = new RecordingRunContext();
    private final OpenAiTurn turn = new OpenAiTurn(ctx, "configured-model");

    /** Hands the turn each data as the model's stream brings it: an event's bytes, through {@link UpstreamHttp.SseLines}. */
    private void chunks(String... data) throws OpenAiTurn.Refused {
        for (String d : data) {
            StringBuilder stream = new StringBuilder();
            for (String line : d.split("\n", -1)) {
                stream.append("data: ").append(line).append('\n');
            }
            stream.append('\n');
            OpenAiTurn.Refused[] refused = new OpenAiTurn.Refused[1];
            try {
                new UpstreamHttp.SseLines().take(ByteBuffer.wrap(stream.toString().getBytes(StandardCharsets.UTF_8)),
                        event -> {
                            try {
                                turn.onData(event);
                            } catch (OpenAiTurn.Refused r) {
                                refused[0] = r;
                            }
                        }, () -> refused[0] == null);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (refused[0] != null) {
                throw refused[0];
            }
        }
    }

    private static String content(String text) {
        return "{\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":" + Json.MAPPER.valueToTree(text)
                + "}}]}";
    }

    @Test
    void contentDeltasAreOneTextMessageCompletedAtTheEnd() throws Exception {
        chunks("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
                content("Chilled food "), content("stays at 8 °C."),
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}");
        assertThat(turn.finished()).isTrue();
        turn.complete();

        List<Event> events = ctx.events();
        String id = ((Event.MessageStarted) events.get(0)).messageId();
        assertThat(events).containsExactly(new Event.MessageStarted(id, Role.ASSISTANT),
                new Event.TextDelta(id, "Chilled food "), new Event.TextDelta(id, "stays at 8 °C."),
                new Event.MessageCompleted(id, "Chilled food stays at 8 °C.", List.of()));
        assertThat(turn.calls()).isEmpty();
    }

    @Test
    void toolCallFragmentsJoinByIndexAndStreamTheirArguments() throws Exception {
        chunks("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\","
                        + "\"function\":{\"name\":\"weather\",\"arguments\":\"\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\","
                        + "\"function\":{\"name\":\"time\",\"arguments\":\"{}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Oslo\\\"}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}");
        turn.complete();

        assertThat(ctx.events()).containsExactly(new Event.ToolCallStarted("call_a", "weather", null),
                new Event.ToolCallArgs("call_a", "{\"city\":"), new Event.ToolCallStarted("call_b", "time", null),
                new Event.ToolCallArgs("call_b", "{}"), new Event.ToolCallArgs("call_a", "\"Oslo\"}"),
                new Event.ToolCallCompleted("call_a", "weather", Json.object().put("city", "Oslo")),
                new Event.ToolCallCompleted("call_b", "time", Json.object()));
        assertThat(turn.calls()).extracting(OpenAiTurn.Call::id).containsExactly("call_a", "call_b");
        assertThat(turn.messages()).extracting(m -> m.toolCalls().get(0).arguments())
                .containsExactly("{\"city\":\"Oslo\"}", "{}");
    }

    @Test
    void aToolCallWithoutAnIdGetsOneAndArgumentsThatAreNotAnObjectParseAsNothing() throws Exception {
        chunks("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"[1,2]\"}}]},"
                + "\"finish_reason\":\"tool_calls\"}]}");
        turn.complete();

        OpenAiTurn.Call call = turn.calls().get(0);
        assertThat(call.id()).startsWith("call_");
        assertThat(call.parsedArguments()).isNull();
        assertThat(ctx.events(Event.ToolCallCompleted.class).get(0).arguments()).isEqualTo(Json.object());
    }

    @Test
    void reasoningContentIsAReasoningMessageClosedWhenTheAnswerBegins() throws Exception {
        chunks("{\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"The user \"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"asks.\"}}]}", content("Yes."),
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}");
        turn.complete();

        List<Event> events = ctx.events();
        String r = ((Event.ReasoningStarted) events.get(0)).messageId();
        assertThat(events.subList(0, 4)).containsExactly(new Event.ReasoningStarted(r),
                new Event.ReasoningDelta(r, "The user "), new Event.ReasoningDelta(r, "asks."),
                new Event.ReasoningCompleted(r, "The user asks."));
        assertThat(events.get(4)).isInstanceOf(Event.MessageStarted.class);
    }

    @Test
    void theFinalUsageIsReportedWithTheServersModelName() throws Exception {
        chunks(content("Hi"), "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}",
                "{\"model\":\"gpt-x-2025\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
                        + "\"total_tokens\":15,\"prompt_tokens_details\":{\"cached_tokens\":8},"
                        + "\"completion_tokens_details\":{\"reasoning_tokens\":1}}}");
        turn.complete();

        assertThat(ctx.events(Event.Usage.class)).containsExactly(new Event.Usage("gpt-x-2025", 12, 3, 1L, 8L));
    }

    @Test
    void usageWithoutAModelNameIsTheConfiguredModels() throws Exception {
        chunks("{\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}");
        turn.complete();

        assertThat(ctx.events(Event.Usage.class)).containsExactly(new Event.Usage("configured-model", 1, 2, null, null));
    }

    @Test
    void aByteThatIsNotUtf8SpoilsItsCharacterNotTheAnswer() throws Exception {
        chunks(content("Le "));
        byte[] bad = "data: {\"choices\":[{\"delta\":{\"content\":\"caf\u00e9 X\"}}]}\n\n".getBytes(StandardCharsets.UTF_8);
        int x = new String(bad, StandardCharsets.ISO_8859_1).indexOf('X');
        bad[x] = (byte) 0xff;
        OpenAiTurn.Refused[] refused = new OpenAiTurn.Refused[1];
        new UpstreamHttp.SseLines().take(ByteBuffer.wrap(bad), event -> {
            try {
                turn.onData(event);
            } catch (OpenAiTurn.Refused r) {
                refused[0] = r;
            }
        }, () -> true);

        assertThat(refused[0]).isNull();
        chunks(content("and on"));
        assertThat(ctx.events(Event.TextDelta.class)).extracting(Event.TextDelta::delta)
                .containsExactly("Le ", "caf\u00e9 \ufffd", "and on");
    }

    @Test
    void aChunkIsReadAsATreeWouldReadIt() throws Exception {
        chunks("{\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"b\"}}]}",
                "{\"choices\":[{\"delta\":{\"content\":\"skip\"},\"index\":1},{\"delta\":{\"content\":\"x\"},\"index\":0}]}",
                "{\"choices\":[7,\"s\",[1],null,{\"index\":\"0\",\"delta\":{\"content\":\"y\"}}]}",
                "{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"w\"},\"index\":0},{\"index\":2.0,\"delta\":{\"content\":\"no\"}}]}",
                "{\"choices\":[{\"index\":4294967296,\"delta\":{\"content\":\"v\"}},{\"index\":true,\"delta\":{\"content\":\"no\"}}]}",
                "{\"choices\":[{\"delta\":{\"content\":5,\"reasoning\":{\"a\":1}}}]}",
                "{\"choices\":[{\"delta\":{\"content\":\"gone\"},\"delta\":[]}]}",
                "{\"x\":{\"choices\":[{\"delta\":{\"content\":\"no\"}}]},\"choices\":[{\"delta\":{\"content\":\"z\","
                        + "\"extra\":[{\"a\":[1,{}]}]}}],\"model\":7}",
                "{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":[1]}");
        turn.complete();

        assertThat(ctx.events(Event.TextDelta.class)).extracting(Event.TextDelta::delta).containsExactly("b", "x", "y", "w", "v", "z");
        assertThat(ctx.events(Event.ReasoningStarted.class)).isEmpty();
        assertThat(ctx.events(Event.Usage.class)).isEmpty();
        assertThat(turn.responseModel()).isNull();
        assertThat(turn.finished()).isTrue();
    }

    @Test
    void anErrorAfterTheChoicesRefusesTheChunkBeforeAnythingOfItIsEmitted() {
        assertThatThrownBy(() -> chunks("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}],"
                + "\"error\":{\"message\":\"overloaded\"}}"))
                .hasMessage("the model server reported an error mid-stream: overloaded");
        assertThat(ctx.events()).isEmpty();
    }

    @Test
    void textAfterTheObjectIsNotJsonAndAValueThatIsNotAnObjectIsRefused() {
        assertThatThrownBy(() -> chunks("{\"choices\":[]} x")).hasMessageStartingWith("the model server sent an event that is not JSON");
        assertThatThrownBy(() -> chunks("{\"choices\":[]}{}")).hasMessageStartingWith("the model server sent an event that is not JSON");
        assertThatThrownBy(() -> chunks("[1]")).hasMessage("the model server sent an event that is not a JSON object: [1]");
        assertThatThrownBy(() -> chunks(" ")).hasMessageStartingWith("the model server sent an event that is not a JSON object");
        assertThat(ctx.events()).isEmpty();
    }

    @Test
    void dataThatIsNotJsonIsRefusedShowingWhatCame() {
        assertThatThrownBy(() -> chunks("{\"choices\": [oops")).isInstanceOf(OpenAiTurn.Refused.class)
                .hasMessage("the model server sent an event that is not JSON: {\"choices\": [oops");
    }

    @Test
    void anErrorInTheStreamIsRefusedWithItsMessage() {
        assertThatThrownBy(() -> chunks(content("Hal"), "{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}"))
                .hasMessage("the model server reported an error mid-stream: overloaded");
    }

    @Test
    void aToolCallThatNeverGetsANameIsRefusedAtTheEnd() throws Exception {
        chunks("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"arguments\":\"{}\"}}]},"
                + "\"finish_reason\":\"tool_calls\"}]}");

        assertThatThrownBy(turn::complete).hasMessage("the model server sent a tool call without a function name");
    }
}
