package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The soak's human in the loop, on A2H: polls the approvals every run waits for
 * ({@code GET /humanlayer/v1/agent/function_calls/pending}) and approves each with
 * {@code respond}; now and then it sends a malformed decision first, which must get a 4xx. Each
 * sweep goes to one of the gateways {@link SoakPlan#nodes} names, at random.
 */
final class SoakOperator implements Runnable {
    private static final String BASE = "/humanlayer/v1/agent/function_calls";

    private final SoakPlan plan;
    private final Random random;
    /** The gateway of the current sweep. */
    private volatile int port;
    /**
     * Approvals whose decision was answered "try again", or lost with the node the kill took: the
     * next decision may find the first one taken.
     */
    private final Set<String> unconfirmed = ConcurrentHashMap.newKeySet();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    volatile boolean stop;

    SoakOperator(SoakPlan plan) {
        this.plan = plan;
        this.random = new Random(plan.seed);
    }

    private HttpResponse<String> send(HttpRequest.Builder b) throws IOException, InterruptedException {
        return http.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + BASE + path));
    }

    /** One sweep, on a node picked at random: every approval pending now, approved, the decisions sent side by side. */
    void sweep() throws InterruptedException {
        port = plan.node(random);
        long sweepStart = System.nanoTime();
        long sweptAt = (sweepStart - plan.startNanos) / 1_000_000;
        // A decision a cluster node forwards to the node running its run waits for that node's answer.
        boolean killedNodeMayOwn = plan.killedNodeMayHoldLeases();
        try {
            HttpResponse<String> pending = send(request("/pending?limit=1000"));
            if (pending.statusCode() != 200) {
                plan.fail("A2H pending list answered " + pending.statusCode() + ": " + pending.body());
                return;
            }
            List<CompletableFuture<Void>> decisions = new ArrayList<>();
            for (JsonNode call : Json.MAPPER.readTree(pending.body()).path("items")) {
                String id = call.path("call_id").asText();
                if (random.nextDouble() < 0.1) {
                    plan.malformedSent.incrementAndGet();
                    HttpResponse<String> bad = send(request("/" + id + "/respond")
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"approved\":\"yes please\"}")));
                    if (bad.statusCode() / 100 == 4) {
                        plan.provokedErrors.incrementAndGet();
                    } else {
                        plan.fail("A2H took a malformed decision: " + bad.statusCode() + " " + bad.body());
                    }
                }
                decisions.add(http.sendAsync(request("/" + id + "/respond").timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"approved\":true,\"comment\":\"soak\"}")).build(),
                        HttpResponse.BodyHandlers.ofString()).handle((decided, error) -> {
                            decided(id, decided, error, killedNodeMayOwn || plan.clusterNodeKilledSince(sweepStart),
                                    sweptAt);
                            return null;
                        }));
            }
            CompletableFuture.allOf(decisions.toArray(CompletableFuture[]::new)).join();
        } catch (IOException e) {
            if (!plan.inCrashWindow(port)) {
                plan.fail("A2H operator lost the gateway on :" + port + ": " + e);
            }
        }
    }

    private void decided(String id, HttpResponse<String> decided, Throwable error, boolean killedNodeMayOwn,
                         long sweptAt) {
        if (error != null) {
            if (!plan.inCrashWindow(port)) {
                plan.fail("A2H respond to " + id + " on :" + port + " (sent " + sweptAt + " ms into the soak) failed: "
                        + error);
            } else {
                // Lost with the node the kill took, which may have taken the decision first.
                unconfirmed.add(id);
            }
        } else if (decided.statusCode() == 200) {
            plan.approvalsAnswered.incrementAndGet();
        } else if (decided.statusCode() == 409 && decided.body().contains("run_in_progress")) {
            // The approval of a run the kill ended continues in a new run, which must wait for
            // the run now active in its conversation: ask again on the next sweep.
            plan.decisionsDeferred.incrementAndGet();
        } else if (decided.statusCode() == 409 && decided.body().contains("already_decided")
                && unconfirmed.remove(id)) {
            // Asked again after a "try again" or a lost answer: the first decision had been taken
            // (the node that took it died, or confirmed it too late); it stands, as the answer says.
            plan.decisionsStoodOnRetry.incrementAndGet();
        } else if (decided.statusCode() == 503 && killedNodeMayOwn) {
            unconfirmed.add(id);
            // A cluster node sent the decision to the node running the run, which the kill took
            // before its lease ran out (or while the decision waited for its answer), and no answer
            // came (the node's "did not answer", or A2H's own wait ran out first): README "Cluster"
            // says try again, and the next sweep does.
            plan.decisionsUnanswered.incrementAndGet();
        } else {
            plan.fail("A2H respond to " + id + " on :" + port + " (sent " + sweptAt + " ms into the soak) answered "
                    + decided.statusCode() + ": " + decided.body());
        }
    }

    @Override
    public void run() {
        try {
            while (!stop) {
                long start = System.nanoTime();
                sweep();
                plan.operatorSweeps.incrementAndGet();
                plan.operatorLongestSweepMs.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
                Thread.sleep(150);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            plan.fail("the A2H operator stopped: " + e);
        }
    }
}
