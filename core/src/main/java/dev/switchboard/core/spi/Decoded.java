package dev.switchboard.core.spi;

import dev.switchboard.core.Command;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;

import java.util.List;

/**
 * The result of decoding one inbound frame: commands for the hub, or a typed failure that
 * the session answers in its own dialect. Bad input is a value here, never an exception.
 */
public sealed interface Decoded {

    /** The frame decoded into these commands (possibly none). */
    record Commands(List<Command> commands) implements Decoded {
        public Commands { commands = List.copyOf(commands); }
    }

    /** The frame was refused with this error. */
    record Failure(GatewayError error) implements Decoded {
    }

    static Decoded of(Command command) {
        return new Commands(List.of(command));
    }

    static Decoded of(Command... commands) {
        return new Commands(List.of(commands));
    }

    static Decoded fail(ErrorCode code, String message) {
        return new Failure(GatewayError.of(code, message));
    }

    static Decoded failField(ErrorCode code, String field, String message) {
        return new Failure(GatewayError.field(code, field, message));
    }
}
