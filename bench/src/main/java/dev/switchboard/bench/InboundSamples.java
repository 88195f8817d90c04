package dev.switchboard.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One sample of every client-to-server message of every dialect, as a client sends it (compact
 * JSON), keyed {@code dialect:message}. The texts are the adapters' spec fixtures.
 */
public final class InboundSamples {
    private static final Map<String, String> SAMPLES = new LinkedHashMap<>();

    static {
        SAMPLES.put("hai-ws:user_message", "{\"type\":\"user_message\",\"content\":\"What are the regulations for food "
                + "storage?\",\"session_id\":\"123e4567-e89b-12d3-a456-426614174000\",\"metadata\":{}}");
        SAMPLES.put("hai-ws:tool_approval_response", "{\"type\":\"tool_approval_response\",\"approval_id\":"
                + "\"appr_abc123\",\"approved\":true,\"feedback\":\"Looks good, proceed with report generation\"}");
        SAMPLES.put("agui-ws:RunAgentInput", "{\"threadId\":\"abc123-thread\",\"runId\":\"run-456\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"What are the food safety regulations?\"}],\"context\":{}}");
        SAMPLES.put("agui-ws:agora:tool_approval_response", "{\"type\":\"CUSTOM\",\"name\":"
                + "\"agora:tool_approval_response\",\"value\":{\"approvalId\":\"appr-xyz789\",\"approved\":true,"
                + "\"feedback\":\"Looks good, proceed with report generation\"}}");
        SAMPLES.put("agui-sse:RunAgentInput", "{\"threadId\":\"thread-1\",\"runId\":\"run-2\",\"state\":{},"
                + "\"messages\":[{\"id\":\"m-user-1\",\"role\":\"user\",\"content\":\"What are the food safety "
                + "regulations?\"}],\"tools\":[],\"context\":[],\"forwardedProps\":{}}");
        SAMPLES.put("agui-sse:RunAgentInput+resume", "{\"threadId\":\"thread-1\",\"runId\":\"run-3\",\"state\":{},"
                + "\"messages\":[{\"id\":\"m-user-1\",\"role\":\"user\",\"content\":\"Generate the final inspection "
                + "report.\"}],\"tools\":[],\"context\":[],\"forwardedProps\":{},\"resume\":[{\"interruptId\":"
                + "\"appr-1\",\"status\":\"resolved\",\"payload\":{\"approved\":true,\"feedback\":\"Go ahead\"}}]}");
        SAMPLES.put("voiceassist-ws:message", "{\"type\":\"message\",\"content\":\"What are the symptoms of "
                + "hypertension?\",\"session_id\":\"550e8400-e29b-41d4-a716-446655440000\","
                + "\"clinical_context_id\":\"optional-uuid\"}");
        SAMPLES.put("voiceassist-ws:ping", "{\"type\":\"ping\"}");
        SAMPLES.put("agentscope-sse:AgentRequest", "{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                + "\"text\":\"Describe this image\"}],\"type\":\"MESSAGE\"}],\"stream\":true,\"model\":\"gpt-4-vision\"}");
        SAMPLES.put("agentscope-sse:mcp_approval_response", "{\"input\":[{\"id\":\"msg_decision\",\"type\":"
                + "\"mcp_approval_response\",\"role\":\"user\",\"content\":[{\"type\":\"data\",\"data\":"
                + "{\"approval_request_id\":\"appr-1\",\"approve\":true,\"reason\":\"report looks right\"}}]}],"
                + "\"session_id\":\"session-42\"}");
    }

    private InboundSamples() {
    }

    /** Every sample's key, in the report's order. */
    public static String[] keys() {
        return SAMPLES.keySet().toArray(new String[0]);
    }

    public static String text(String key) {
        String text = SAMPLES.get(key);
        if (text == null) {
            throw new IllegalArgumentException("no inbound sample " + key);
        }
        return text;
    }

    /** The dialect of a sample's key. */
    public static Dialect dialect(String key) {
        return Dialect.of(key.substring(0, key.indexOf(':')));
    }
}
