package dev.switchboard.core.spi;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One HTTP request to a {@link RestService}: the method, the path after the matched prefix
 * (starting with {@code /}), the query, the headers (names in lower case), the body as text,
 * and whether the caller is on the loopback interface.
 */
public record RestRequest(String method, String prefix, String path, Map<String, List<String>> query,
                          Map<String, String> headers, String body, boolean loopback) {
    public RestRequest {
        query = query == null ? Map.of() : Map.copyOf(query);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        body = body == null ? "" : body;
    }

    /** A header by lower-case name. */
    public Optional<String> header(String name) {
        return Optional.ofNullable(headers.get(name));
    }

    /** The first value of a query parameter. */
    public Optional<String> queryParam(String name) {
        List<String> values = query.get(name);
        return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }
}
