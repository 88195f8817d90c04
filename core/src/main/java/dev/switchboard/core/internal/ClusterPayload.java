package dev.switchboard.core.internal;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.EventCodec;

import java.nio.charset.StandardCharsets;

/**
 * How an event travels between nodes: its timestamp, a newline, its run id (empty for none), a
 * newline, the event's JSON as the store keeps it. The seq travels beside it, given by the bus; the
 * conversation is the channel's. JSON escapes every newline, so the first two split the parts.
 */
final class ClusterPayload {
    private ClusterPayload() {
    }

    /** The payload of {@code env}, {@code json} its event's JSON as {@link EventCodec#toJson} writes it. */
    static byte[] encode(Envelope env, String json) {
        String run = env.runId() == null ? "" : env.runId();
        return (env.timestamp() + "\n" + run + "\n" + json).getBytes(StandardCharsets.UTF_8);
    }

    static Envelope decode(String conversationId, long seq, byte[] payload) {
        String text = new String(payload, StandardCharsets.UTF_8);
        int first = text.indexOf('\n');
        int second = first < 0 ? -1 : text.indexOf('\n', first + 1);
        if (second < 0) {
            throw new IllegalArgumentException("event " + seq + " of conversation " + conversationId
                    + " came from the cluster in a form this node does not read");
        }
        long timestamp = Long.parseLong(text, 0, first, 10);
        String run = second == first + 1 ? null : text.substring(first + 1, second);
        return new Envelope(conversationId, run, seq, timestamp, EventCodec.fromJson(text.substring(second + 1)));
    }
}
