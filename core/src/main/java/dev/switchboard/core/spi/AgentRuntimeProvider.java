package dev.switchboard.core.spi;

/**
 * Entry point of a runtime module, found with {@link java.util.ServiceLoader}; its
 * {@link #id()} is the {@code --runtime} value that selects it.
 */
public interface AgentRuntimeProvider extends Plugin {
    /** Creates the runtime from the gateway's settings; an {@link IllegalArgumentException} names a wrong option. */
    AgentRuntime create(Settings settings);

    /**
     * Creates the runtime, which reports its model calls, tool calls and upstream calls to
     * {@code telemetry}; by default it reports nothing ({@link #create(Settings)}).
     */
    default AgentRuntime create(Settings settings, Telemetry telemetry) {
        return create(settings);
    }
}
