package dev.switchboard.core.spi;

/**
 * One HTTP request of a dialect served over HTTP: its body decodes into commands, and the
 * events that follow are encoded either as a stream of server-sent events (each frame one
 * {@code data:} event) or as one JSON body written when the exchange is done.
 *
 * <p>An error answered before the first frame ({@link #encodeError}) becomes the whole
 * response, with the HTTP status of its error code; after the first frame it is one more
 * frame of the stream. Called from one thread at a time.
 */
public interface HttpExchange extends DialectSession {

    /** After {@link #decode}: whether the answer is an SSE stream rather than one JSON body. */
    boolean streaming();

    /** True once the exchange has written its last frame; the server then ends the response. */
    boolean done();

    /**
     * Every response is a stream of its own that must read whole from its first event, so by
     * default an exchange that reattaches from a cursor takes nothing in from before it.
     */
    @Override
    default void prime(dev.switchboard.core.Envelope envelope) throws java.io.IOException {
    }
}
