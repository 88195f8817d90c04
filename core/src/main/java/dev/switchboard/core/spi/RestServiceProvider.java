package dev.switchboard.core.spi;

import dev.switchboard.core.ConversationHub;

/**
 * Entry point of a REST module, found with {@link java.util.ServiceLoader}; its {@link #id()}
 * names it in logs and errors.
 */
public interface RestServiceProvider extends Plugin {

    @Override
    String id();

    /** Creates the service with what it may use: the hub, its store and the configuration. */
    RestService create(Context context);

    /** What a REST service may use. */
    record Context(ConversationHub hub, ConversationStore store, Settings settings) {
    }
}
