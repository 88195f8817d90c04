package dev.switchboard.core.spi;

import dev.switchboard.core.Envelope;
import dev.switchboard.core.GatewayError;

import dev.switchboard.core.Command;

import java.io.IOException;
import java.util.List;

/**
 * One connection's translator between its dialect and the event core. It holds the
 * per-connection dialect state (step pairing, chunk indexes, buffered tool arguments) and is
 * only ever called from the connection's own thread, so it needs no locking.
 */
public interface DialectSession {

    /** Decodes one inbound text frame. Never throws for bad peer input. */
    Decoded decode(String text);

    /** Encodes one event into zero or more frames. */
    void encode(Envelope envelope, FrameWriter out) throws IOException;

    /** Encodes an error answered to this connection alone. */
    void encodeError(GatewayError error, FrameWriter out) throws IOException;

    /**
     * An event this connection's client was shown on an earlier connection, before it resumed
     * from its cursor: the events of the run in progress up to the cursor, in order, before any
     * event after it is encoded. By default the session takes it in as if it had written it and
     * writes nothing, so the run goes on as the client saw it (the same statuses, chunk numbers
     * that continue). A dialect whose every connection must read as a stream of its own
     * overrides this.
     */
    default void prime(Envelope envelope) throws IOException {
        encode(envelope, FrameWriter.discarding());
    }

    /** Frames to send as soon as the connection is open (none by default). */
    default void opened(FrameWriter out) throws IOException {
    }

    /**
     * Commands to run as soon as the connection is open, after {@link #opened}: for example
     * joining the conversation the connection's URL names. None by default.
     */
    default List<Command> openingCommands() {
        return List.of();
    }

    /** Answer to a dialect-level ping command (none by default). */
    default void pong(FrameWriter out) throws IOException {
    }
}
