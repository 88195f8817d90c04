package dev.switchboard.core.spi;

import dev.switchboard.core.Command;
import dev.switchboard.core.Subscriber;

/**
 * Conversations and their runs as a connection sees them: it sends commands as a
 * {@link Subscriber} and receives the events of the conversations it joins.
 */
public interface Conversations {

    /**
     * Handles a command from a subscriber without blocking the caller. Errors are answered
     * through {@link Subscriber#reject}; {@link dev.switchboard.core.Command.Ping} is the
     * connection's own business.
     */
    void submit(Command command, Subscriber from);

    /** The subscriber's connection closed: it leaves every conversation. Runs go on. */
    void disconnected(Subscriber s);

    /** Runs in progress. */
    int activeRuns();
}
