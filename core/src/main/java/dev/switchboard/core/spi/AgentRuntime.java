package dev.switchboard.core.spi;

/**
 * An agent that answers runs. {@link #start} must return quickly: the runtime does its work
 * on its own threads and reports through the {@link RunContext}, ending every run with
 * exactly one {@link RunContext#finish()} or {@link RunContext#fail}.
 */
public interface AgentRuntime extends AutoCloseable {

    /** The runtime's id, also its {@code --runtime} value. */
    String id();

    /** Starts a run. */
    RunHandle start(RunRequest request, RunContext context);

    /** Releases the runtime's threads and connections. */
    @Override
    default void close() {
    }
}
