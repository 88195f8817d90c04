package dev.switchboard.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The baseline the encoders are measured against: what a first version of a gateway would do for
 * a text delta, build a {@code Map} of the frame's fields, {@code ObjectMapper.writeValueAsString}
 * it, frame the string, and take its UTF-8 bytes. Its frames are the encoders' frames, field for
 * field (a unit test checks this).
 */
public final class NaiveEncoding {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private NaiveEncoding() {
    }

    /**
     * The bytes of one text delta frame. {@code counter} is the dialect's running number where it
     * has one (VoiceAssist's {@code chunk_index}, AgentScope's {@code sequence_number}).
     */
    public static byte[] textDelta(Dialect dialect, String conversationId, String messageId, String delta,
                                   long timestamp, long counter) throws JsonProcessingException {
        Map<String, Object> frame = new LinkedHashMap<>();
        switch (dialect) {
            case HAI_WS -> {
                frame.put("type", "assistant_message_chunk");
                frame.put("content", delta);
                frame.put("session_id", conversationId);
                frame.put("message_id", messageId);
                frame.put("is_final", false);
            }
            case AGUI_WS, AGUI_SSE -> {
                frame.put("type", "TEXT_MESSAGE_CONTENT");
                frame.put("messageId", messageId);
                frame.put("delta", delta);
                frame.put("timestamp", timestamp);
            }
            case VOICEASSIST_WS -> {
                frame.put("type", "message_chunk");
                frame.put("message_id", messageId);
                frame.put("content", delta);
                frame.put("chunk_index", counter);
            }
            case AGENTSCOPE_SSE -> {
                frame.put("sequence_number", counter);
                frame.put("object", "content");
                frame.put("status", "in_progress");
                frame.put("error", null);
                frame.put("type", "text");
                frame.put("index", 0);
                frame.put("delta", true);
                frame.put("msg_id", messageId);
                frame.put("text", delta);
            }
        }
        String json = MAPPER.writeValueAsString(frame);
        String framed = dialect.webSocket ? json : "data: " + json + "\n\n";
        return framed.getBytes(StandardCharsets.UTF_8);
    }
}
