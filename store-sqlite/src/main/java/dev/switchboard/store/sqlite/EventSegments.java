package dev.switchboard.store.sqlite;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The payload of a segment row: the events of one conversation and run with consecutive seqs, as
 * one JSON array that alternates each event's timestamp, less the row's {@code ts} (the first
 * event's), and the event's own JSON object as {@link dev.switchboard.core.EventCodec#toJson}
 * writes it, embedded as it is:
 * <pre>[0,{"type":"text_delta","messageId":"m1","delta":"Hel"},2,{"type":"text_delta",...}]</pre>
 * The row's {@code seq} is the first event's seq and each further event's is one more; the row's
 * {@code last_seq} says how many events there are, which a read checks.
 */
final class EventSegments {
    private static final ObjectReader EVENT_READER = Json.STORED_MAPPER.readerFor(Event.class);

    private EventSegments() {
    }

    /** Starts a payload with its first event, whose timestamp is the row's. */
    static void start(StringBuilder payload, String eventJson) {
        payload.setLength(0);
        payload.append("[0,").append(eventJson);
    }

    /** Appends an event of timestamp {@code ts} to a payload {@link #start started} for a row of timestamp {@code rowTs}. */
    static void append(StringBuilder payload, long rowTs, long ts, String eventJson) {
        payload.append(',').append(ts - rowTs).append(',').append(eventJson);
    }

    /** Ends a payload. */
    static void end(StringBuilder payload) {
        payload.append(']');
    }

    /**
     * Adds to {@code out} the events of a segment row whose seq is above {@code afterSeq}, in seq
     * order, until {@code out} holds {@code limit}.
     *
     * @throws IllegalStateException when the payload does not hold {@code lastSeq - firstSeq + 1} events
     */
    static void read(String conversationId, String runId, long firstSeq, long lastSeq, long rowTs, String payload,
                     long afterSeq, int limit, List<Envelope> out) {
        try (JsonParser p = Json.STORED_MAPPER.createParser(payload)) {
            if (p.nextToken() != JsonToken.START_ARRAY) {
                throw corrupt(conversationId, firstSeq, "it is not an array");
            }
            long seq = firstSeq;
            JsonToken token;
            while ((token = p.nextToken()) != JsonToken.END_ARRAY) {
                if (token != JsonToken.VALUE_NUMBER_INT) {
                    throw corrupt(conversationId, firstSeq, "a timestamp is missing at seq " + seq);
                }
                long ts = rowTs + p.getLongValue();
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    throw corrupt(conversationId, firstSeq, "an event is missing at seq " + seq);
                }
                if (seq > lastSeq) {
                    throw corrupt(conversationId, firstSeq, "it holds more events than seqs up to " + lastSeq);
                }
                if (seq > afterSeq) {
                    out.add(new Envelope(conversationId, runId, seq, ts, EVENT_READER.readValue(p)));
                    if (out.size() >= limit) {
                        return;
                    }
                } else {
                    p.skipChildren();
                }
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
