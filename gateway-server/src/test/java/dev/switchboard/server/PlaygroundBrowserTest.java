package dev.switchboard.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.Event;
import dev.switchboard.core.Json;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ConversationStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

import static dev.switchboard.server.PlaygroundBrowser.answers;
import static dev.switchboard.server.PlaygroundBrowser.seqs;
import static dev.switchboard.server.PlaygroundBrowser.storedRun;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The playground page in a real browser (headless Chromium): what a person does on it, checked
 * against what the gateway stored.
 */
class PlaygroundBrowserTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(Map.of("demo-delay-ms", 20));

    @TempDir
    Path dir;

    @BeforeAll
    static void chromiumIsInstalled() {
        PlaygroundBrowser.chromium();
    }

    private static ConversationStore store() {
        return gateway.server().hub().store();
    }

    @Test
    void aMessageSentFromTheChatStreamsItsAnswerIntoOneBubble() throws Exception {
        JsonNode r = PlaygroundBrowser.run("chat", gateway.port());
        List<Envelope> stored = storedRun(store(), r.get("conversation").asText());
        assertThat(r.get("text").asText()).isEqualTo(answers(stored).get(0));
        long deltas = stored.stream().filter(e -> e.event() instanceof Event.TextDelta).count();
        assertThat(deltas).isGreaterThan(1);
        assertThat(r.get("updates").asInt()).as("the bubble grew delta by delta").isGreaterThanOrEqualTo((int) deltas);
        assertThat(r.get("unlabeled")).as("form fields without a label").isEmpty();
        assertThat(r.get("overflow").asInt()).as("horizontal overflow at 390 px wide").isLessThanOrEqualTo(0);
    }

    @Test
    void theMirrorShowsOneRunInThreeDialectsInSeqOrder() throws Exception {
        JsonNode r = PlaygroundBrowser.run("mirror", gateway.port());
        List<Envelope> stored = storedRun(store(), r.get("conversation").asText());
        List<Long> storedSeqs = stored.stream().map(Envelope::seq).toList();
        long first = storedSeqs.get(0);
        long last = storedSeqs.get(storedSeqs.size() - 1);
        for (String column : List.of("hai", "agui-ws", "agentscope")) {
            List<Long> shown = seqs(r.get("seqs").get(column));
            assertThat(shown).as(column).isSorted().doesNotHaveDuplicates().contains(first, last);
            assertThat(storedSeqs).as(column).containsAll(shown);
        }
        assertThat(seqs(r.get("seqs").get("agui-ws"))).as("AG-UI has a frame for every core event").isEqualTo(storedSeqs);
        assertThat(seqs(r.get("rows"))).as("one row per seq, in order").isEqualTo(storedSeqs);
        List<String> kinds = stored.stream().map(e -> e.event().getClass().getSimpleName()).toList();
        assertThat(r.get("labels")).extracting(JsonNode::asText).as("the core event each row names").isEqualTo(kinds);
    }

    @Test
    void aReportAskedOverHaiIsApprovedFromTheAguiColumn() throws Exception {
        JsonNode r = PlaygroundBrowser.run("approval", gateway.port());
        List<Envelope> stored = storedRun(store(), r.get("conversation").asText());
        String approvalId = r.get("approvalId").asText();
        Event.ApprovalResolved resolved = stored.stream().map(Envelope::event)
                .filter(e -> e instanceof Event.ApprovalResolved).map(e -> (Event.ApprovalResolved) e)
                .findFirst().orElseThrow();
        assertThat(resolved.approvalId()).isEqualTo(approvalId);
        assertThat(resolved.approved()).isTrue();
        assertThat(resolved.feedback()).isEqualTo("Checked from the AG-UI column");
        assertThat(store().approval(approvalId).orElseThrow().status()).isEqualTo(ApprovalRecord.Status.APPROVED);
        assertThat(stored).anyMatch(e -> e.event() instanceof Event.ToolResult t
                && t.toolName().equals("generate_inspection_report") && t.ok());
        assertThat(r.get("text").asText()).isEqualTo(answers(stored).get(answers(stored).size() - 1));
        assertThat(r.get("outcome").asText()).startsWith("Approved from AG-UI");
    }

    @Test
    void aConnectionCutMidSlowRunResumesWithNoGap() throws Exception {
        JsonNode r = PlaygroundBrowser.run("resume", gateway.port());
        List<Envelope> stored = storedRun(store(), r.get("conversation").asText());
        assertThat(r.get("verdict").asText()).as(r.get("report").asText()).isEqualTo("ok");
        assertThat(r.get("report").asText()).contains("No gap");
        long cutAt = r.get("cutAt").asLong();
        assertThat(cutAt).as("cut mid-run").isGreaterThan(stored.get(0).seq()).isLessThan(stored.get(stored.size() - 1).seq());
        List<Long> shown = seqs(r.get("seqs"));
        assertThat(shown).isSorted().doesNotHaveDuplicates();
        Set<Long> chunks = stored.stream().filter(e -> e.event() instanceof Event.TextDelta || e.event() instanceof Event.RunFinished)
                .map(Envelope::seq).collect(Collectors.toSet());
        assertThat(shown).as("every chunk and the run's end, across the cut").containsAll(chunks);
        assertThat(r.get("text").asText()).isEqualTo(answers(stored).get(0));
    }

    @Test
    void theExportedLogHoldsTheFramesOfEveryDialectAsTheGatewayStoredTheRun() throws Exception {
        JsonNode r = PlaygroundBrowser.run("export", gateway.port());
        String conversation = r.get("conversation").asText();
        List<Envelope> stored = storedRun(store(), conversation);
        Map<Long, Event> bySeq = stored.stream().collect(Collectors.toMap(Envelope::seq, Envelope::event));
        JsonNode transcript = Json.MAPPER.readTree(Path.of(r.get("file").asText()).toFile());
        assertThat(transcript.get("format").asText()).isEqualTo("switchboard-playground-transcript/1");
        assertThat(transcript.get("conversationId").asText()).isEqualTo(conversation);
        Map<String, TreeSet<Long>> seqsByDialect = new HashMap<>();
        int deltas = 0;
        for (JsonNode f : transcript.get("frames")) {
            assertThat(f.has("time") && f.has("direction") && f.has("size") && f.has("type")).as(f.toString()).isTrue();
            if (f.get("seq").isNull() || !f.get("direction").asText().equals("in")) {
                continue;
            }
            long seq = f.get("seq").asLong();
            String dialect = f.get("dialect").asText();
            assertThat(bySeq).as("%s frame %s", dialect, f).containsKey(seq);
            seqsByDialect.computeIfAbsent(dialect, d -> new TreeSet<>()).add(seq);
            String delta = deltaOf(dialect, f.get("frame"));
            if (delta != null) {
                deltas++;
                assertThat(bySeq.get(seq)).as("%s frame %s", dialect, f)
                        .isEqualTo(new Event.TextDelta(((Event.TextDelta) bySeq.get(seq)).messageId(), delta));
            }
        }
        assertThat(seqsByDialect).containsOnlyKeys("hai", "agui-ws", "agui-sse", "voiceassist", "agentscope");
        assertThat(seqsByDialect.get("agui-ws")).isEqualTo(new TreeSet<>(bySeq.keySet()));
        long textDeltas = stored.stream().filter(e -> e.event() instanceof Event.TextDelta).count();
        assertThat(deltas).as("every dialect's chunks match the stored deltas").isEqualTo(5 * textDeltas);
        long end = stored.get(stored.size() - 1).seq();
        for (String d : List.of("hai", "agui-ws", "agui-sse", "agentscope")) {
            assertThat(seqsByDialect.get(d).last()).as(d).isEqualTo(end);
        }
    }

    /** The text delta a dialect's frame shows, or null when it shows none. */
    private static String deltaOf(String dialect, JsonNode f) {
        Function<String, String> field = name -> f.path(name).isTextual() ? f.get(name).asText() : null;
        return switch (dialect) {
            case "hai" -> f.path("type").asText().equals("assistant_message_chunk") && !f.path("is_final").asBoolean()
                    ? field.apply("content") : null;
            case "agui-ws", "agui-sse" -> f.path("type").asText().equals("TEXT_MESSAGE_CONTENT") ? field.apply("delta") : null;
            case "voiceassist" -> f.path("type").asText().equals("message_chunk") ? field.apply("content") : null;
            case "agentscope" -> f.path("object").asText().equals("content") && f.path("delta").asBoolean()
                    ? field.apply("text") : null;
            default -> null;
        };
    }

    @Test
    void thePageWorksWithAuthenticationOnAndExplainsARefusedToken() throws Exception {
        try (TestGateway g = TestGateway.start(dir, Map.of("jwt-secret", AuthServerTest.SECRET, "demo-delay-ms", 20))) {
            String good = AuthServerTest.hs256("alice", Instant.now().plusSeconds(600));
            String expired = AuthServerTest.hs256("alice", Instant.now().minusSeconds(3600));
            JsonNode r = PlaygroundBrowser.run("auth", g.port(), good, expired);
            String conversation = r.get("conversation").asText();
            List<Envelope> stored = storedRun(g.server.hub().store(), conversation);
            assertThat(r.get("refused").asText()).contains("the token has expired");
            assertThat(r.get("claims").get("sub").asText()).contains("alice");
            assertThat(r.get("text").asText()).isEqualTo(answers(stored).get(0));
            assertThat(g.server.hub().store().conversation(conversation).orElseThrow().owner()).isEqualTo("alice");
            assertThat(r.get("stored").get("session").asBoolean()).as("the token is in session storage").isTrue();
            assertThat(r.get("stored").get("local").asInt()).as("and nothing in local storage").isZero();
        }
    }
}
