package dev.switchboard.core.spi;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A REST API served on the gateway's port under fixed path prefixes, such as the A2H side.
 * The server calls {@link #handle} off its event loops, so a service may read its store; it
 * authenticates its callers itself (the gateway's bearer-token check does not apply).
 */
public interface RestService {

    /** Path prefixes served, without a trailing slash (for example {@code /humanlayer/v1}). */
    List<String> prefixes();

    /** Answers one request; never fails for bad client input (that is a 4xx response). */
    CompletionStage<RestResponse> handle(RestRequest request);
}
