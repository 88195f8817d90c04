package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.ToolSpec;
import dev.switchboard.core.spi.Settings;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class OpenAiMessagesTest {
    private static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static InputMessage user(String id, String text) {
        return InputMessage.text(id, Role.USER, text);
    }

    private static InputMessage assistant(String id, String text) {
        return InputMessage.text(id, Role.ASSISTANT, text);
    }

    private static InputMessage call(String id, String name, String args) {
        return new InputMessage(id, Role.ASSISTANT, "", List.of(new ToolCallRef(id, name, args)), null, null);
    }

    private static InputMessage result(String id, String callId, String content) {
        return new InputMessage(id, Role.TOOL, content, List.of(), callId, null);
    }

    @Test
    void anAnswersTextAndItsToolCallsAreOneAssistantMessageFollowedByTheResults() {
        assertThat(OpenAiMessages.chat(List.of(user("u1", "Weather?"), assistant("m1", "Let me check."),
                call("c1", "weather", "{\"city\":\"Oslo\"}"), call("c2", "weather", "{\"city\":\"Rome\"}"),
                result("t1", "c1", "cold"), result("t2", "c2", "warm"), assistant("m2", "Oslo is cold.")))).isEqualTo(json("""
                [{"role":"user","content":"Weather?"},
                 {"role":"assistant","content":"Let me check.","tool_calls":[
                   {"id":"c1","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Oslo\\"}"}},
                   {"id":"c2","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Rome\\"}"}}]},
                 {"role":"tool","tool_call_id":"c1","content":"cold"},
                 {"role":"tool","tool_call_id":"c2","content":"warm"},
                 {"role":"assistant","content":"Oslo is cold."}]"""));
    }

    @Test
    void aToolCallLeftUnansweredIsAnsweredAsSuchBeforeTheNextMessage() {
        assertThat(OpenAiMessages.chat(List.of(user("u1", "Pick a colour"), call("c1", "pick_colour", "{}"),
                user("u2", "Never mind")))).isEqualTo(json("""
                [{"role":"user","content":"Pick a colour"},
                 {"role":"assistant","content":null,"tool_calls":[
                   {"id":"c1","type":"function","function":{"name":"pick_colour","arguments":"{}"}}]},
                 {"role":"tool","tool_call_id":"c1","content":"(no result: the call was not answered)"},
                 {"role":"user","content":"Never mind"}]"""));
    }

    @Test
    void aToolResultOfNoOpenCallAndARepeatedCallAreLeftOut() {
        assertThat(OpenAiMessages.chat(List.of(result("t0", "ghost", "boo"), user("u1", "Go"), call("c1", "go", "{}"),
                new InputMessage("client-copy", Role.ASSISTANT, "", List.of(new ToolCallRef("c1", "go", "{}")), null,
                        null),
                result("t1", "c1", "went"), result("t1-again", "c1", "went twice")))).isEqualTo(json("""
                [{"role":"user","content":"Go"},
                 {"role":"assistant","content":null,"tool_calls":[
                   {"id":"c1","type":"function","function":{"name":"go","arguments":"{}"}}]},
                 {"role":"tool","tool_call_id":"c1","content":"went"}]"""));
    }

    @Test
    void systemAndDeveloperMessagesAreSystemMessages() {
        assertThat(OpenAiMessages.chat(List.of(InputMessage.text("s", Role.SYSTEM, "Be brief."),
                InputMessage.text("d", Role.DEVELOPER, "Use metric units.")))).isEqualTo(json("""
                [{"role":"system","content":"Be brief."},{"role":"system","content":"Use metric units."}]"""));
    }

    @Test
    void theRequestStreamsWithUsageAndOffersServerToolsBeforeTheClientsOwn() {
        Map<String, String> options = Map.of("openai-base-url", "http://h/v1", "model", "m", "system-prompt", "Be kind.",
                "tools", "[{\"name\":\"lookup\",\"description\":\"Looks up\",\"url\":\"http://h/lookup\"}]");
        OpenAiConfig config = OpenAiConfig.from((Settings) k -> Optional.ofNullable(options.get(k)));

        JsonNode body = json(new String(OpenAiMessages.request(config, List.of(user("u1", "Hi")),
                List.of(new ToolSpec("lookup", "the client's own, shadowed", null),
                        new ToolSpec("show_map", "Shows a map", json("{\"type\":\"object\",\"properties\":{}}"))),
                json("[{\"description\":\"page\",\"value\":\"checkout\"}]"))));

        assertThat(body).isEqualTo(json("""
                {"model":"m","messages":[
                   {"role":"system","content":"Be kind."},
                   {"role":"system","content":"Context from the application:\\n- page: checkout"},
                   {"role":"user","content":"Hi"}],
                 "stream":true,"stream_options":{"include_usage":true},
                 "tools":[
                   {"type":"function","function":{"name":"lookup","description":"Looks up",
                     "parameters":{"type":"object","properties":{}}}},
                   {"type":"function","function":{"name":"show_map","description":"Shows a map",
                     "parameters":{"type":"object","properties":{}}}}]}"""));
    }
}
