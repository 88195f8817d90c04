package dev.switchboard.adapter.a2h;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.RestRequest;
import dev.switchboard.core.spi.RestResponse;
import dev.switchboard.core.spi.RestServiceProvider;
import dev.switchboard.core.testing.FinishingRuntime;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of the A2H REST bodies: whatever a caller posts to any endpoint that
 * takes a body, the answer is a JSON document with a 2xx or 4xx status, never an exception or a 500.
 */
class A2hFuzzTest {
    /** Every endpoint that reads a body: a prefix, a path and the method. */
    private static final List<String[]> ENDPOINTS = List.of(
            new String[] {A2hService.HUMANLAYER_PREFIX, "/function_calls"},
            new String[] {A2hService.HUMANLAYER_PREFIX, "/contact_requests"},
            new String[] {A2hService.A2H_PREFIX, "/human_contacts"},
            new String[] {A2hService.A2H_PREFIX, "/humans"},
            new String[] {A2hService.HUMANLAYER_PREFIX, "/agent/function_calls/%s/respond"},
            new String[] {A2hService.HUMANLAYER_PREFIX, "/agent/human_contacts/%s/respond"});

    private static final InMemoryConversationStore STORE = new InMemoryConversationStore();
    private static final ConversationHub HUB = ConversationHub.builder().store(STORE)
            .runtime(new FinishingRuntime()).build();
    private static final A2hService SERVICE = (A2hService) new A2hServiceProvider().create(
            new RestServiceProvider.Context(HUB.conversations(), HUB.operatorApprovals(), STORE,
                    key -> Optional.empty()));

    /**
     * The first byte picks the endpoint (so a seed file is that byte and a JSON body); the rest
     * is the body. The respond endpoints name the calls the seeds create.
     */
    @FuzzTest(maxDuration = "10s")
    void anyBodyIsAnsweredWithJsonAndNeverA500(byte[] input) throws Exception {
        String[] endpoint = ENDPOINTS.get(input.length == 0 ? 0 : (input[0] & 0xff) % ENDPOINTS.size());
        String path = endpoint[1].contains("%s") ? String.format(endpoint[1], endpoint[1].contains("function") ? "c1" : "h1")
                : endpoint[1];
        String body = input.length == 0 ? "" : new String(input, 1, input.length - 1, StandardCharsets.UTF_8);
        RestResponse res = SERVICE.handle(new RestRequest("POST", endpoint[0], path, Map.of(), Map.of(), body, true))
                .toCompletableFuture().join();
        assertThat(res.status()).as(path + " " + body).isBetween(200, 499);
        JsonNode json = Json.MAPPER.readTree(res.json());
        if (res.status() >= 400) {
            assertThat(json.path("error").path("code").isTextual()).as(res.json()).isTrue();
        }
    }
}
