package dev.switchboard.core.spi;

/**
 * Entry point of a dialect module, found with {@link java.util.ServiceLoader}: a public
 * no-argument constructor, an {@link #id()} that is also the dialect's configuration key,
 * and {@link #create} receiving only what the adapter may use.
 */
public interface WireAdapterProvider extends Plugin {

    /** The dialect's id; two providers with one id stop start-up. */
    @Override
    String id();

    /** Creates the adapter. */
    WireAdapter create(AdapterContext context);
}
