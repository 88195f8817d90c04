package dev.switchboard.core.spi;

import dev.switchboard.core.Principal;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a dialect session learns about its connection when it is created: an id, the
 * authenticated principal, and the request path and query of the upgrade.
 */
public record SessionContext(String connectionId, Principal principal, String path,
                             Map<String, List<String>> query) {
    public SessionContext {
        query = query == null ? Map.of() : Map.copyOf(query);
    }

    /** The first value of a query parameter. */
    public Optional<String> queryParam(String name) {
        List<String> values = query.get(name);
        return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }
}
