package dev.switchboard.server;

/**
 * The gateway cannot start for a reason the operator can fix (its port or data directory is in
 * use, the data directory cannot be written); the message is one line saying which and what to do.
 */
public final class StartupException extends RuntimeException {
    public StartupException(String message) {
        super(message);
    }

    public StartupException(String message, Throwable cause) {
        super(message, cause);
    }
}
