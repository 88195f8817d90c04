package dev.switchboard.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;

import java.io.UncheckedIOException;

/** The gateway's own JSON form of an {@link Event}, used to keep events in a store. */
public final class EventCodec {
    private static final ObjectWriter WRITER = Json.MAPPER.writerFor(Event.class);
    private static final ObjectReader READER = Json.MAPPER.readerFor(Event.class);

    private EventCodec() {
    }

    /** The event as one JSON document with a {@code type} discriminator. */
    public static String toJson(Event event) {
        try {
            return WRITER.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("cannot serialise " + event.kind(), e);
        }
    }

    /** The event read back from {@link #toJson}. */
    public static Event fromJson(String json) {
        try {
            return READER.readValue(json);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("stored event is unreadable: " + e.getOriginalMessage(), e);
        }
    }
}
