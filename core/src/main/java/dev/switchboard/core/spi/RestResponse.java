package dev.switchboard.core.spi;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Map;

/** A {@link RestService}'s answer: a status, a JSON body and extra headers. */
public record RestResponse(int status, String json, Map<String, String> headers) {
    public RestResponse {
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    public static RestResponse json(int status, JsonNode body) {
        return new RestResponse(status, body.toString(), Map.of());
    }
}
