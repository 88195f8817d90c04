package dev.switchboard.core.spi;

/**
 * Entry point of a REST module, found with {@link java.util.ServiceLoader}; its {@link #id()}
 * names it in logs and errors.
 */
public interface RestServiceProvider extends Plugin {

    @Override
    String id();

    /** Creates the service with what it may use: the hub's narrow interfaces, its store and the configuration. */
    RestService create(Context context);

    /**
     * What a REST service may use.
     *
     * @param conversations the conversations and runs, as a connection uses them
     * @param approvals     approvals as an operator asks for, lists and decides them
     * @param store         the store behind the hub
     * @param settings      the gateway's configuration
     */
    record Context(Conversations conversations, OperatorApprovals approvals, ConversationStore store,
                   Settings settings) {
    }
}
