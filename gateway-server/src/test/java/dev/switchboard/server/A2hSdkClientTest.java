package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An agent on the unmodified HumanLayer SDK ({@code @humanlayer/sdk} 0.7.9, from npm), pointed at
 * the gateway by {@code HUMANLAYER_API_BASE}, gets its approvals from people on HAI WebSockets and
 * its answer through {@code respond}: this side plays the people while the script waits.
 */
class A2hSdkClientTest {
    static final long SDK_DEADLINE_SECONDS = 60;

    @TempDir
    static Path dataDir;
    static TestGateway gateway;

    @BeforeAll
    static void start() {
        gateway = A2hServerTest.keyed(dataDir);
    }

    @AfterAll
    static void stop() {
        gateway.close();
    }

    @Test
    void theHumanLayerSdkGetsItsAnswersFromPeopleOnHaiAndThroughRespond() throws Exception {
        String nonce = "hl-" + UUID.randomUUID();
        try (WsClient approver = present(nonce + "-approve"); WsClient denier = present(nonce + "-deny");
             WsClient guard = present(nonce + "-wrapped")) {
            Map<String, String> env = Map.of(
                    "HUMANLAYER_API_BASE", "http://127.0.0.1:" + gateway.port() + A2hServerTest.HL,
                    "HUMANLAYER_API_KEY", A2hServerTest.KEY);
            CompletableFuture<NodeClient.Result> sdk = CompletableFuture.supplyAsync(() -> {
                try {
                    return NodeClient.run("humanlayer-sdk-client.mjs", env, SDK_DEADLINE_SECONDS + 30, nonce);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });

            decideOnHai(sdk, approver, nonce + "-approve", "send_email", true, "ship it");
            decideOnHai(sdk, denier, nonce + "-deny", "wire_money", false, "not this one");

            awaitPending(sdk, "function_calls", nonce + "-queued");
            try (WsClient late = A2hServerTest.join(gateway, nonce + "-queued")) {
                JsonNode request = A2hServerTest.approvalRequest(late);
                assertThat(request.path("tool_name").asText()).isEqualTo("archive_inbox");
                A2hServerTest.answer(late, request, true, null);
            }

            decideOnHai(sdk, guard, nonce + "-wrapped", "sendReminder", true, null);

            JsonNode question = awaitPending(sdk, "human_contacts", nonce + "-respond");
            assertThat(question.at("/spec/msg").asText()).isEqualTo("Which cost centre should I bill?");
            A2hServerTest.Res answered = A2hServerTest.post(gateway, A2hServerTest.HL + "/agent/human_contacts/"
                    + question.path("call_id").asText() + "/respond", Json.object().put("response", "CC-42"));
            assertThat(answered.status()).as(answered.body().toString()).isEqualTo(200);

            NodeClient.Result r = sdk.get(SDK_DEADLINE_SECONDS, TimeUnit.SECONDS);
            assertThat(r.lines()).as(r.output()).contains("5 passed, 0 failed");
            assertThat(r.exitCode()).as(r.output()).isZero();
        }
    }

    /** A person on HAI who has joined the conversation before any call arrives. */
    private static WsClient present(String conversation) {
        WsClient hai = A2hServerTest.join(gateway, conversation);
        hai.untilCompleted();
        return hai;
    }

    private static void decideOnHai(CompletableFuture<NodeClient.Result> sdk, WsClient hai, String conversation,
                                    String fn, boolean approved, String feedback) throws Exception {
        awaitPending(sdk, "function_calls", conversation);
        JsonNode request = A2hServerTest.approvalRequest(hai);
        assertThat(request.path("tool_name").asText()).isEqualTo(fn);
        A2hServerTest.answer(hai, request, approved, feedback);
    }

    /** The SDK's pending call for a conversation, once it has asked; fails early if the script ended. */
    private static JsonNode awaitPending(CompletableFuture<NodeClient.Result> sdk, String kind, String conversation)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SDK_DEADLINE_SECONDS);
        while (true) {
            if (sdk.isDone()) {
                throw new AssertionError("the SDK script ended before asking in " + conversation + ":\n"
                        + sdk.join().output());
            }
            JsonNode page = A2hServerTest.get(gateway, A2hServerTest.HL + "/agent/" + kind + "/pending").body();
            for (JsonNode item : page.path("items")) {
                if (item.at("/spec/channel/session/session_id").asText().equals(conversation)) {
                    return item;
                }
            }
            assertThat(System.nanoTime()).as("the SDK asked in " + conversation + " in time").isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
