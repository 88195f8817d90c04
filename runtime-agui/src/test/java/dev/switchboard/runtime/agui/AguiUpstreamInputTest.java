package dev.switchboard.runtime.agui;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.spi.RunRequest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class AguiUpstreamInputTest {
    private static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static RunRequest request(JsonNode context, JsonNode state, JsonNode forwardedProps) {
        return new RunRequest("thread-1", "run-1", null, Principal.ANONYMOUS,
                List.of(InputMessage.text("u2", Role.USER, "And now?")),
                List.of(new ToolSpec("show_map", "Shows a map", json("{\"type\":\"object\"}"))), context, state,
                forwardedProps, null);
    }

    @Test
    void theInputCarriesTheThreadEveryMessageAndTheClientsToolsContextStateAndProps() {
        List<InputMessage> conversation = List.of(InputMessage.text("sys", Role.SYSTEM, "Be brief."),
                InputMessage.text("u1", Role.USER, "Hi"), InputMessage.text("m1", Role.ASSISTANT, "Hello."),
                new InputMessage("c1", Role.ASSISTANT, "", List.of(new ToolCallRef("c1", "lookup", "{\"q\":1}")), null,
                        null),
                new InputMessage("t1", Role.TOOL, "found", List.of(), "c1", "lookup"),
                new InputMessage("t2", Role.TOOL, "orphan", List.of(), null, null),
                InputMessage.text("u2", Role.USER, "And now?"));

        JsonNode input = json(new String(AguiUpstreamInput.build(
                request(json("[{\"description\":\"page\",\"value\":\"home\"}]"), json("{\"step\":2}"),
                        json("{\"tenant\":\"acme\"}")), "run-1", conversation, null)));

        assertThat(input).isEqualTo(json("""
                {"threadId":"thread-1","runId":"run-1","state":{"step":2},
                 "messages":[
                   {"id":"sys","role":"system","content":"Be brief."},
                   {"id":"u1","role":"user","content":"Hi"},
                   {"id":"m1","role":"assistant","content":"Hello."},
                   {"id":"c1","role":"assistant","toolCalls":[
                     {"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\\"q\\":1}"}}]},
                   {"id":"t1","role":"tool","content":"found","toolCallId":"c1"},
                   {"id":"u2","role":"user","content":"And now?"}],
                 "tools":[{"name":"show_map","description":"Shows a map","parameters":{"type":"object"}}],
                 "context":[{"description":"page","value":"home"}],
                 "forwardedProps":{"tenant":"acme"}}"""));
    }

    @Test
    void anObjectContextBecomesOneEntryPerKeyAndAbsentOptionalsAreLeftOut() {
        JsonNode input = json(new String(AguiUpstreamInput.build(request(json("{\"page\":\"home\",\"n\":2}"), null, null),
                "run-2", List.of(), Json.MAPPER.createArrayNode().add(Json.object().put("interruptId", "i1")
                        .put("status", "cancelled")))));

        assertThat(input.get("context")).isEqualTo(json("""
                [{"description":"page","value":"home"},{"description":"n","value":"2"}]"""));
        assertThat(input.has("state")).isFalse();
        assertThat(input.has("forwardedProps")).isFalse();
        assertThat(input.get("resume")).isEqualTo(json("[{\"interruptId\":\"i1\",\"status\":\"cancelled\"}]"));
        assertThat(input.toString()).doesNotContain("null");
    }
}
