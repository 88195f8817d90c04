package dev.switchboard.adapter.voiceassist;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Command;
import dev.switchboard.core.ConversationHub;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.InMemoryConversationStore;
import dev.switchboard.core.Moderation;
import dev.switchboard.core.Principal;
import dev.switchboard.core.Role;
import dev.switchboard.core.Subscriber;
import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.Decoded;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.core.spi.FrameWriter;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.spi.SessionContext;
import dev.switchboard.testkit.CollectingFrameWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** VoiceAssist connections against the real conversation hub: errors that only the hub can cause. */
class VoiceAssistHubTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** Runs wait here for the test to drive them. */
    private final BlockingQueue<RunContext> runs = new LinkedBlockingQueue<>();
    private final ConversationHub hub = ConversationHub.builder()
            .store(new InMemoryConversationStore())
            .runtime(new AgentRuntime() {
                @Override
                public String id() {
                    return "test";
                }

                @Override
                public RunHandle start(RunRequest request, RunContext context) {
                    runs.add(context);
                    return () -> { };
                }
            })
            .moderation(Moderation.of(List.of("darn")))
            .workerThreads(2)
            .build();

    @AfterEach
    void closeHub() {
        hub.close();
    }

    private RunContext nextRun() throws InterruptedException {
        RunContext run = runs.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(run).as("a run started").isNotNull();
        return run;
    }

    /** One connection as the gateway runs it, without a socket: frames land in a queue. */
    private final class Connection implements Subscriber {
        private final Principal principal;
        private final DialectSession session;
        private final CollectingFrameWriter out = new CollectingFrameWriter();
        private final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();

        Connection(Principal principal, String conversationId) {
            this.principal = principal;
            VoiceAssistAdapter adapter = new VoiceAssistAdapter(AdapterContext.defaults());
            SessionContext context = new SessionContext("conn-" + principal.id(), principal, "/api/realtime/ws",
                    Map.of("conversationId", List.of(conversationId)));
            assertThat(adapter.refuseUpgrade(context)).isNull();
            session = adapter.newSession(context);
            write(session::opened);
            for (Command c : session.openingCommands()) {
                hub.submit(c, this);
            }
        }

        void send(String text) {
            Decoded decoded;
            synchronized (this) {
                decoded = session.decode(text);
            }
            if (decoded instanceof Decoded.Failure f) {
                reject(f.error());
                return;
            }
            for (Command c : ((Decoded.Commands) decoded).commands()) {
                if (c instanceof Command.Ping) {
                    write(session::pong);
                } else {
                    hub.submit(c, this);
                }
            }
        }

        JsonNode next() throws InterruptedException {
            JsonNode frame = frames.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(frame).as("a frame within " + WAIT).isNotNull();
            VoiceAssistTesting.assertTimestampWellFormed(frame);
            return frame;
        }

        List<JsonNode> until(String type) throws InterruptedException {
            List<JsonNode> got = new ArrayList<>();
            JsonNode frame;
            do {
                frame = next();
                got.add(frame);
            } while (!frame.get("type").textValue().equals(type));
            return got;
        }

        /** Frames written so far and not yet taken. */
        List<JsonNode> pending() {
            return new ArrayList<>(frames);
        }

        private synchronized void write(Write write) {
            try {
                write.to(out);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            frames.addAll(out.json());
            out.clear();
        }

        @Override
        public Principal principal() {
            return principal;
        }

        @Override
        public boolean answersApprovals() {
            return false;
        }

        @Override
        public boolean deliver(Envelope envelope) {
            write(out -> session.encode(envelope, out));
            return true;
        }

        @Override
        public void overflowed() {
            throw new AssertionError("unbounded test connection overflowed");
        }

        @Override
        public void reject(GatewayError error) {
            write(out -> session.encodeError(error, out));
        }
    }

    private interface Write {
        void to(FrameWriter out) throws IOException;
    }

    private static String type(JsonNode frame) {
        return frame.get("type").textValue();
    }

    private static String errorCode(JsonNode frame) {
        assertThat(type(frame)).isEqualTo("error");
        return frame.get("error").get("code").textValue();
    }

    private static void answer(RunContext run, String messageId, String... chunks) {
        run.emit(new Event.StepStarted("thinking"));
        run.emit(new Event.MessageStarted(messageId, Role.ASSISTANT));
        for (String chunk : chunks) {
            run.emit(new Event.TextDelta(messageId, chunk));
        }
        run.emit(new Event.MessageCompleted(messageId, String.join("", chunks), List.of()));
        run.finish();
    }

    @Test
    void newConversationOpensQuietlyAndItsFirstQuestionIsStreamed() throws Exception {
        Connection voice = new Connection(Principal.ANONYMOUS, "conv-new");
        voice.send("{\"type\":\"message\",\"content\":\"What is hypertension?\"}");
        RunContext run = nextRun();
        answer(run, "msg-1", "High blood ", "pressure.");

        assertThat(type(voice.next())).isEqualTo("connected");
        List<JsonNode> frames = voice.until("message_complete");
        assertThat(frames).extracting(VoiceAssistHubTest::type)
                .containsExactly("message_start", "message_chunk", "message_chunk", "message_complete");
        assertThat(frames.get(3).get("content").textValue()).isEqualTo("High blood pressure.");
    }

    @Test
    void connectingToAnotherPrincipalsConversationIsAnsweredAuthFailed() throws Exception {
        Connection alice = new Connection(Principal.of("alice"), "conv-alice");
        alice.send("{\"type\":\"message\",\"content\":\"Hello\"}");
        answer(nextRun(), "msg-1", "Hi.");
        alice.until("message_complete");

        Connection bob = new Connection(Principal.of("bob"), "conv-alice");

        assertThat(type(bob.next())).isEqualTo("connected");
        assertThat(errorCode(bob.next())).isEqualTo("AUTH_FAILED");
    }

    @Test
    void messageNamingAnotherPrincipalsConversationIsAnsweredAuthFailedAndStartsNothing() throws Exception {
        Connection alice = new Connection(Principal.of("alice"), "conv-alice");
        alice.send("{\"type\":\"message\",\"content\":\"Hello\"}");
        answer(nextRun(), "msg-1", "Hi.");
        alice.until("message_complete");
        Connection bob = new Connection(Principal.of("bob"), "conv-bob");

        bob.send("{\"type\":\"message\",\"content\":\"Show me\",\"session_id\":\"conv-alice\"}");

        assertThat(type(bob.next())).isEqualTo("connected");
        JsonNode error = bob.next();
        assertThat(errorCode(error)).isEqualTo("AUTH_FAILED");
        assertThat(error.has("message_id")).isFalse();
        assertThat(runs).isEmpty();
    }

    @Test
    void secondQuestionWhileAnAnswerStreamsIsAnsweredQueryProcessingError() throws Exception {
        Connection voice = new Connection(Principal.ANONYMOUS, "conv-1");
        voice.send("{\"type\":\"message\",\"content\":\"First question\"}");
        RunContext run = nextRun();

        voice.send("{\"type\":\"message\",\"content\":\"Second question\"}");

        assertThat(type(voice.next())).isEqualTo("connected");
        assertThat(errorCode(voice.next())).isEqualTo("QUERY_PROCESSING_ERROR");
        answer(run, "msg-1", "First answer.");
        assertThat(voice.until("message_complete")).extracting(VoiceAssistHubTest::type)
                .containsExactly("message_start", "message_chunk", "message_complete");
    }

    @Test
    void blockedWordsAreAnsweredQueryProcessingErrorAndStartNothing() throws Exception {
        Connection voice = new Connection(Principal.ANONYMOUS, "conv-1");

        voice.send("{\"type\":\"message\",\"content\":\"darn it\"}");

        assertThat(type(voice.next())).isEqualTo("connected");
        assertThat(errorCode(voice.next())).isEqualTo("QUERY_PROCESSING_ERROR");
        assertThat(runs).isEmpty();
    }

    @Test
    void runtimeFailureMidAnswerIsAnErrorNamingTheMessage() throws Exception {
        Connection voice = new Connection(Principal.ANONYMOUS, "conv-1");
        voice.send("{\"type\":\"message\",\"content\":\"What is hypertension?\"}");
        RunContext run = nextRun();
        run.emit(new Event.MessageStarted("msg-1", Role.ASSISTANT));
        run.emit(new Event.TextDelta("msg-1", "High"));
        run.fail(ErrorCode.INTERNAL, "the model crashed");

        assertThat(type(voice.next())).isEqualTo("connected");
        List<JsonNode> frames = voice.until("error");
        assertThat(frames).extracting(VoiceAssistHubTest::type).containsExactly("message_start", "message_chunk", "error");
        assertThat(frames.get(2).get("message_id").textValue()).isEqualTo("msg-1");
        assertThat(errorCode(frames.get(2))).isEqualTo("INTERNAL_ERROR");
    }

    @Test
    void pingIsAnsweredWithPongWithoutTheHub() throws Exception {
        Connection voice = new Connection(Principal.ANONYMOUS, "conv-1");

        voice.send("{\"type\":\"ping\"}");

        assertThat(type(voice.next())).isEqualTo("connected");
        assertThat(voice.next().properties()).extracting(Map.Entry::getKey).containsExactly("type", "timestamp");
        assertThat(voice.pending()).isEmpty();
    }
}
