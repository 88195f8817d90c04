package dev.switchboard.store.sqlite;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.EventCodec;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The payload of a segment row: the events of one conversation and run with consecutive seqs, as
 * one JSON array that alternates each event's timestamp, less the row's {@code ts} (the first
 * event's), and the event. An event is its own JSON object as {@link EventCodec#toJson} writes it,
 * embedded as it is, but for a delta that continues the event before it (a text delta of the same
 * message, a reasoning delta of the same message, tool call arguments of the same call): that one is
 * its delta alone, a JSON string, and is of the kind and id of the event before it (schema version 7):
 * <pre>[0,{"type":"message_started","messageId":"m1","role":"assistant"},0,{"type":"text_delta","messageId":"m1","delta":"Hel"},2,"lo"]</pre>
 * Most events are such deltas, so a segment holds little more than the text of its messages: a
 * delta of one word is some ten characters rather than ninety. Files of versions 4 to 6 hold
 * objects only, which a read takes as before.
 * <p>
 * The row's {@code seq} is the first event's seq and each further event's is one more; the row's
 * {@code last_seq} says how many events there are, which a read checks.
 */
final class EventSegments {
    private static final ObjectReader EVENT_READER = Json.STORED_MAPPER.readerFor(Event.class);
    private static final JsonStringEncoder QUOTER = JsonStringEncoder.getInstance();

    /** The kinds a segment may keep as their delta alone (see {@link #deltaContinuing}). */
    static final Set<Event.Kind> DELTAS = EnumSet.of(Event.Kind.TEXT_DELTA, Event.Kind.REASONING_DELTA,
            Event.Kind.TOOL_CALL_ARGS);

    private EventSegments() {
    }

    /** Starts a payload with its first event's JSON; that event's timestamp is the row's. */
    static void start(StringBuilder payload, String eventJson) {
        payload.setLength(0);
        payload.append("[0,").append(eventJson);
    }

    /**
     * Appends {@code event}, of timestamp {@code ts}, to a payload {@link #start started} for a row of
     * timestamp {@code rowTs} whose last event so far is {@code previous}; {@code json} is the
     * event's JSON if it is at hand, else null. Appends nothing and returns false when the payload
     * would grow past {@code maxChars}.
     */
    static boolean append(StringBuilder payload, long rowTs, Event previous, long ts, Event event, String json,
                          int maxChars) {
        int before = payload.length();
        payload.append(',').append(ts - rowTs).append(',');
        String delta = deltaContinuing(previous, event);
        if (delta != null) {
            payload.append('"');
            QUOTER.quoteAsString(delta, payload);
            payload.append('"');
        } else {
            payload.append(json != null ? json : EventCodec.toJson(event));
        }
        if (payload.length() > maxChars) {
            payload.setLength(before);
            return false;
        }
        return true;
    }

    /** Ends a payload. */
    static void end(StringBuilder payload) {
        payload.append(']');
    }

    /** {@code event}'s delta when it continues {@code previous}, of the same kind and id, so a segment keeps the delta alone; else null. */
    private static String deltaContinuing(Event previous, Event event) {
        if (event instanceof Event.TextDelta d && previous instanceof Event.TextDelta p
                && d.messageId().equals(p.messageId())) {
            return d.delta();
        }
        if (event instanceof Event.ReasoningDelta d && previous instanceof Event.ReasoningDelta p
                && d.messageId().equals(p.messageId())) {
            return d.delta();
        }
        if (event instanceof Event.ToolCallArgs d && previous instanceof Event.ToolCallArgs p
                && d.toolCallId().equals(p.toolCallId())) {
            return d.delta();
        }
        return null;
    }

    /** The event of the kind and id of {@code previous} with the delta {@code delta}, or null when {@code previous} is no delta. */
    private static Event continuing(Event previous, String delta) {
        if (previous instanceof Event.TextDelta p) {
            return new Event.TextDelta(p.messageId(), delta);
        }
        if (previous instanceof Event.ReasoningDelta p) {
            return new Event.ReasoningDelta(p.messageId(), delta);
        }
        if (previous instanceof Event.ToolCallArgs p) {
            return new Event.ToolCallArgs(p.toolCallId(), delta);
        }
        return null;
    }

    /**
     * Adds to {@code out} the events of a segment row whose seq is above {@code afterSeq}, in seq
     * order, until {@code out} holds {@code limit}.
     *
     * @throws IllegalStateException when the payload does not hold {@code lastSeq - firstSeq + 1} events,
     *     or a delta alone that follows no delta
     */
    static void read(String conversationId, String runId, long firstSeq, long lastSeq, long rowTs, String payload,
                     long afterSeq, int limit, List<Envelope> out) {
        try (JsonParser p = Json.STORED_MAPPER.createParser(payload)) {
            if (p.nextToken() != JsonToken.START_ARRAY) {
                throw corrupt(conversationId, firstSeq, "it is not an array");
            }
            long seq = firstSeq;
            Event previous = null;
            JsonToken token;
            while ((token = p.nextToken()) != JsonToken.END_ARRAY) {
                if (token != JsonToken.VALUE_NUMBER_INT) {
                    throw corrupt(conversationId, firstSeq, "a timestamp is missing at seq " + seq);
                }
                long ts = rowTs + p.getLongValue();
                token = p.nextToken();
                if (seq > lastSeq) {
                    throw corrupt(conversationId, firstSeq, "it holds more events than seqs up to " + lastSeq);
                }
                Event event;
                if (token == JsonToken.VALUE_STRING) {
                    try {
                        event = continuing(previous, p.getText());
                    } catch (IllegalArgumentException e) {
                        throw corrupt(conversationId, firstSeq, "the delta at seq " + seq + " is refused: " + e.getMessage());
                    }
                    if (event == null) {
                        throw corrupt(conversationId, firstSeq, "the delta at seq " + seq + " follows no delta");
                    }
                } else if (token == JsonToken.START_OBJECT) {
                    // Read even when it is not wanted: a delta after it may need its id.
                    event = EVENT_READER.readValue(p);
                } else {
                    throw corrupt(conversationId, firstSeq, "an event is missing at seq " + seq);
                }
                if (seq > afterSeq) {
                    out.add(new Envelope(conversationId, runId, seq, ts, event));
                    if (out.size() >= limit) {
                        return;
                    }
                }
                previous = event;
                seq++;
            }
            if (seq != lastSeq + 1) {
                throw corrupt(conversationId, firstSeq, "it holds events up to seq " + (seq - 1) + ", not " + lastSeq);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("stored segment at seq " + firstSeq + " of conversation " + conversationId
                    + " is unreadable: " + e.getMessage(), e);
        }
    }

    private static IllegalStateException corrupt(String conversationId, long firstSeq, String why) {
        return new IllegalStateException("stored segment at seq " + firstSeq + " of conversation " + conversationId
                + " is unreadable: " + why);
    }
}
