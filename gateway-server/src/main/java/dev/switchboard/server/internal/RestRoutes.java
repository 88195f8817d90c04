package dev.switchboard.server.internal;

import dev.switchboard.core.spi.RestService;
import dev.switchboard.core.spi.RestServiceProvider;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The REST services found on the class path, by path prefix; two services on one prefix stop start-up. */
public final class RestRoutes {
    /** A service and the prefix of a request it answers. */
    public record Match(RestService service, String prefix) {
    }

    private final Map<String, RestService> byPrefix = new LinkedHashMap<>();

    public RestRoutes(List<RestService> services) {
        for (RestService s : services) {
            for (String prefix : s.prefixes()) {
                RestService other = byPrefix.putIfAbsent(prefix, s);
                if (other != null) {
                    throw new IllegalStateException("two REST services serve " + prefix + ": "
                            + other.getClass().getName() + " and " + s.getClass().getName());
                }
            }
        }
    }

    /** The services of these providers. */
    public static RestRoutes load(List<RestServiceProvider> providers, RestServiceProvider.Context context) {
        List<RestService> services = new ArrayList<>();
        for (RestServiceProvider p : providers) {
            services.add(p.create(context));
        }
        return new RestRoutes(services);
    }

    /** The service whose prefix is {@code path} or a parent of it. */
    public Optional<Match> match(String path) {
        for (Map.Entry<String, RestService> e : byPrefix.entrySet()) {
            String prefix = e.getKey();
            if (path.equals(prefix) || path.startsWith(prefix + "/")) {
                return Optional.of(new Match(e.getValue(), prefix));
            }
        }
        return Optional.empty();
    }

    public boolean isEmpty() {
        return byPrefix.isEmpty();
    }
}
