package dev.switchboard.core.spi;

/**
 * Provides the bus that joins this gateway to a cluster; found through {@link java.util.ServiceLoader}
 * like every plugin. At most one is configured; with none, the gateway runs alone.
 */
public interface ClusterProvider extends Plugin {

    /** Whether the settings ask for this cluster (its URL is given). */
    boolean configured(Settings settings);

    /** Connects; fails with a message that says what could not be reached. */
    ClusterBus connect(Settings settings) throws Exception;
}
