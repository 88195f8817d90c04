package dev.switchboard.core;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import dev.switchboard.core.testing.LogCapture;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.StoreBatch;
import dev.switchboard.core.testing.RecordingSubscriber;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class ConversationHubTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** A runtime the test drives by hand: each started run's context lands in {@link #runs}. */
    static final class ManualRuntime implements AgentRuntime {
        /** {@code thread}: the one the hub started the run on. */
        record Started(RunRequest request, RunContext ctx, AtomicBoolean cancelled, Thread thread) {
        }

        /** What {@link #startsWithoutWaiting} answers. */
        volatile boolean startsWithoutWaiting;
        /** What {@link #readsHistory} answers (asked when a hub is built). */
        volatile boolean readsHistory;

        final BlockingQueue<Started> runs = new LinkedBlockingQueue<>();
        final BlockingQueue<List<ApprovalRecord>> resumed = new LinkedBlockingQueue<>();

        @Override
        public RunHandle resume(RunRequest request, List<ApprovalRecord> decided, RunContext ctx) {
            resumed.add(decided);
            return start(request, ctx);
        }

        @Override
        public String id() {
            return "manual";
        }

        @Override
        public boolean startsWithoutWaiting(List<InputMessage> newMessages) {
            return startsWithoutWaiting;
        }

        @Override
        public boolean readsHistory() {
            return readsHistory;
        }

        @Override
        public RunHandle start(RunRequest request, RunContext ctx) {
            AtomicBoolean cancelled = new AtomicBoolean();
            runs.add(new Started(request, ctx, cancelled, Thread.currentThread()));
            return () -> cancelled.set(true);
        }

        Started next() throws InterruptedException {
            Started s = runs.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(s).as("a run started").isNotNull();
            return s;
        }
    }

    /** A store that records, at each delivery, whether the event was already stored. */
    private final InMemoryConversationStore store = new InMemoryConversationStore();
    private final ManualRuntime runtime = new ManualRuntime();
    private ConversationHub hub;

    @BeforeEach
    void setUp() {
        hub = ConversationHub.builder().store(store).runtime(runtime)
                .moderation(Moderation.of(List.of("darn"))).build();
    }

    @AfterEach
    void tearDown() {
        hub.close();
    }

    private static Command.StartRun ask(String conversation, String text) {
        return Command.StartRun.of(conversation, InputMessage.text(Ids.next("msg"), Role.USER, text));
    }

    /** A run's start that sends these messages, as AG-UI clients send a conversation's whole history. */
    private static Command.StartRun withMessages(String conversation, List<InputMessage> messages) {
        return new Command.StartRun(conversation, null, null, messages, List.of(), null, null, null, null);
    }

    @Test
    void eventsGetConsecutiveSeqWhoseReservationIsStoredBeforeDeliveryAndAreStoredBehind() throws Exception {
        RecordingSubscriber storedCheck = shownOnceReserved(store);
        hub.submit(ask("c1", "hello"), storedCheck);
        ManualRuntime.Started run = runtime.next();
        run.ctx().emit(new Event.MessageStarted("m1", Role.ASSISTANT));
        run.ctx().emit(new Event.TextDelta("m1", "Hi"));
        run.ctx().emit(new Event.MessageCompleted("m1", "Hi", List.of()));
        run.ctx().finish();

        List<Envelope> got = storedCheck.until(Event::terminal, WAIT);
        assertThat(got).extracting(e -> e.event().kind()).containsExactly(Event.Kind.RUN_STARTED,
                Event.Kind.MESSAGE_STARTED, Event.Kind.TEXT_DELTA, Event.Kind.MESSAGE_COMPLETED, Event.Kind.RUN_FINISHED);
        assertThat(got).extracting(Envelope::seq).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(got).extracting(Envelope::runId).containsOnly(run.request().runId());
        hub.close();
        assertThat(store.events("c1", 0, 100)).as("stored once the hub stopped").isEqualTo(got);
        assertThat(store.lastSeq("c1")).as("a clean stop gives back the unused reservation").isEqualTo(5);
        assertThat(store.messages("c1")).extracting(InputMessage::role).containsExactly(Role.USER, Role.ASSISTANT);
    }

    @Test
    void theStoreGetsBackWhatItPreparedForEachEventOnTheEmittingThread() throws Exception {
        InMemoryConversationStore inner = new InMemoryConversationStore();
        List<String> preparedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Object> written = new java.util.concurrent.CopyOnWriteArrayList<>();
        ConversationStore preparing = (ConversationStore) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ConversationStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("prepare")) {
                        preparedOn.add(Thread.currentThread().getName());
                        return "prepared " + ((Envelope) args[0]).seq();
                    }
                    if (method.getName().equals("write")) {
                        StoreBatch b = (StoreBatch) args[0];
                        for (int i = 0; i < b.events().size(); i++) {
                            written.add(b.prepared(i));
                        }
                    }
                    try {
                        return method.invoke(inner, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        try (ConversationHub own = ConversationHub.builder().store(preparing).runtime(runtime).build()) {
            RecordingSubscriber a = new RecordingSubscriber();
            own.submit(ask("c1", "hello"), a);
            ManualRuntime.Started run = runtime.next();
            run.ctx().emit(new Event.TextDelta("m1", "Hi"));
            run.ctx().finish();
            a.until(Event::terminal, WAIT);
        }
        assertThat(written).containsExactly("prepared 1", "prepared 2", "prepared 3");
        assertThat(preparedOn).doesNotContain("switchboard-sequencer");
    }

    @Test
    void secondStartWhileARunIsActiveGetsBusyAndStartsNothing() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "one"), a);
        ManualRuntime.Started first = runtime.next();
        hub.submit(ask("c1", "two"), a);
        assertThat(a.nextError(WAIT).code()).isEqualTo(ErrorCode.BUSY);
        assertThat(runtime.runs).isEmpty();
        first.ctx().finish();
        a.until(Event::terminal, WAIT);
        hub.submit(ask("c1", "three"), a);
        runtime.next().ctx().finish();
    }

    @Test
    void oneSubscribersCommandsAreHandledInTheOrderSent() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        for (int i = 0; i < 30; i++) {
            hub.submit(ask("order" + i, "first"), a);
            hub.submit(ask("order" + i, "second"), a);
        }
        for (int i = 0; i < 30; i++) {
            assertThat(a.nextError(WAIT).code()).isEqualTo(ErrorCode.BUSY);
        }
        for (int i = 0; i < 30; i++) {
            ManualRuntime.Started run = runtime.next();
            assertThat(run.request().messages().get(0).content()).isEqualTo("first");
            run.ctx().finish();
        }
    }

    @Test
    void runsPastTheRateLimitAreRefusedWithTheWait() throws Exception {
        long[] now = {1_000_000};
        ConversationHub limited = ConversationHub.builder().store(new InMemoryConversationStore()).runtime(runtime)
                .runsPerMinute(2).clock(() -> now[0]).build();
        try {
            RecordingSubscriber a = new RecordingSubscriber();
            for (int i = 0; i < 2; i++) {
                limited.submit(ask("rl-" + i, "hi"), a);
                runtime.next().ctx().finish();
            }
            limited.submit(ask("rl-3", "hi"), a);
            GatewayError refused = a.nextError(WAIT);
            assertThat(refused.code()).isEqualTo(ErrorCode.RATE_LIMITED);
            assertThat(refused.details()).containsEntry("retry_after_seconds", "30");
            now[0] += 30_000;
            limited.submit(ask("rl-4", "hi"), a);
            runtime.next().ctx().finish();
        } finally {
            limited.close();
        }
    }

    @Test
    void blockedWordGetsModerationErrorAndNothingIsStored() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "well DARN it"), a);
        assertThat(a.nextError(WAIT).code()).isEqualTo(ErrorCode.MODERATION);
        assertThat(runtime.runs).isEmpty();
        assertThat(store.conversation("c1")).isEmpty();
        assertThat(store.messages("c1")).isEmpty();
    }

    @Test
    void aSecondDecisionBeforeTheFirstIsStoredIsAlreadyDecidedNotUnknown() throws Exception {
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.CountDownLatch storeMayWrite = new java.util.concurrent.CountDownLatch(1);
        // The store writer's batches wait until the end: neither the request nor the decision is stored meanwhile.
        ConversationStore slow = (ConversationStore) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ConversationStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("write") && ((StoreBatch) args[0]).hasRows()) {
                        storeMayWrite.await();
                    }
                    try {
                        return method.invoke(inner, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build();
        String approvalId;
        try {
            RecordingSubscriber person = new RecordingSubscriber();
            own.submit(ask("c1", "report"), person);
            ManualRuntime.Started run = runtime.next();
            CompletionStage<ApprovalDecision> decision = run.ctx().requestApproval(new ApprovalRequest("call_1",
                    "generate_inspection_report", "makes a report", Json.object(), "asked", RiskLevel.HIGH));
            Envelope requested = person.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT).get(1);
            approvalId = ((Event.ApprovalRequested) requested.event()).approvalId();
            own.submit(new Command.DecideApproval(approvalId, false, null, null), person);
            assertThat(decision.toCompletableFuture().get(5, TimeUnit.SECONDS).approved()).isFalse();
            run.ctx().finish();
            person.until(Event::terminal, WAIT);
            assertThat(inner.approval(approvalId)).as("nothing stored yet").isEmpty();

            own.submit(new Command.DecideApproval(approvalId, true, null, null), person);
            GatewayError again = person.nextError(WAIT);
            assertThat(again.code()).isEqualTo(ErrorCode.CONFLICT);
            assertThat(again.message()).contains("already decided");
        } finally {
            storeMayWrite.countDown();
            own.close();
        }
        assertThat(inner.approval(approvalId)).get().extracting(ApprovalRecord::status)
                .isEqualTo(ApprovalRecord.Status.REJECTED);
    }

    @Test
    void approvalIsDecidedOnceAndTheRunContinues() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(ask("c1", "report"), person);
        ManualRuntime.Started run = runtime.next();
        ObjectNode args = Json.object().put("inspection_id", "INS-1");
        CompletionStage<ApprovalDecision> decision = run.ctx().requestApproval(
                new ApprovalRequest("call_1", "generate_inspection_report", "makes a report", args, "asked", RiskLevel.HIGH));
        Envelope requested = person.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT).get(1);
        String approvalId = ((Event.ApprovalRequested) requested.event()).approvalId();
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.pendingApprovals("c1")).extracting(ApprovalRecord::approvalId).containsExactly(approvalId);

        hub.submit(new Command.DecideApproval(approvalId, true, "fine", null), person);
        ApprovalDecision d = decision.toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(d.approved()).isTrue();
        assertThat(d.feedback()).isEqualTo("fine");
        Envelope resolved = person.next(WAIT);
        assertThat(resolved.event()).isEqualTo(new Event.ApprovalResolved(approvalId, true, "fine", "anonymous"));

        hub.submit(new Command.DecideApproval(approvalId, false, null, null), person);
        assertThat(person.nextError(WAIT).code()).isEqualTo(ErrorCode.CONFLICT);
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.approval(approvalId)).get().extracting(ApprovalRecord::status)
                .isEqualTo(ApprovalRecord.Status.APPROVED);
        run.ctx().finish();
        person.until(Event::terminal, WAIT);
    }

    @Test
    void unknownApprovalIsNotFoundAndForeignApprovalIsForbidden() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        RecordingSubscriber stranger = new RecordingSubscriber();
        hub.submit(new Command.DecideApproval("appr_nope", true, null, null), person);
        assertThat(person.nextError(WAIT).code()).isEqualTo(ErrorCode.NOT_FOUND);

        hub.submit(ask("c1", "report"), person);
        ManualRuntime.Started run = runtime.next();
        CompletionStage<ApprovalDecision> decision = run.ctx().requestApproval(
                new ApprovalRequest("call_1", "t", "d", null, "r", RiskLevel.LOW));
        String approvalId = ((Event.ApprovalRequested) person.until(
                e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT).get(1).event()).approvalId();
        hub.submit(new Command.DecideApproval(approvalId, true, null, null), stranger);
        assertThat(stranger.nextError(WAIT).code()).isEqualTo(ErrorCode.FORBIDDEN);
        assertThat(decision.toCompletableFuture()).isNotDone();
        run.ctx().finish();
    }

    @Test
    void aConnectionInSeveralConversationsAnswersTheirApprovalsAndOneThatJoinedOneOfThemOnlyThatOnes()
            throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        RecordingSubscriber watcher = new RecordingSubscriber();
        List<ManualRuntime.Started> runs = new ArrayList<>();
        List<CompletionStage<ApprovalDecision>> decisions = new ArrayList<>();
        List<String> approvalIds = new ArrayList<>();
        for (String id : List.of("c1", "c2", "c3")) {
            hub.submit(ask(id, "report"), person);
            ManualRuntime.Started run = runtime.next();
            runs.add(run);
            decisions.add(run.ctx().requestApproval(new ApprovalRequest("call_" + id, "t", "d", null, "r", RiskLevel.LOW)));
            List<Envelope> got = person.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT);
            approvalIds.add(((Event.ApprovalRequested) got.get(got.size() - 1).event()).approvalId());
            if (id.equals("c1")) {
                hub.submit(Command.Subscribe.live("c1"), watcher);
            }
        }
        hub.submit(new Command.DecideApproval(approvalIds.get(1), true, null, null), watcher);
        assertThat(watcher.nextError(WAIT).code()).as("not a member of c2").isEqualTo(ErrorCode.FORBIDDEN);
        assertThat(decisions.get(1).toCompletableFuture()).isNotDone();

        hub.submit(new Command.DecideApproval(approvalIds.get(0), true, null, null), watcher);
        hub.submit(new Command.DecideApproval(approvalIds.get(1), false, null, null), person);
        hub.submit(new Command.DecideApproval(approvalIds.get(2), true, null, null), person);
        assertThat(decisions.get(0).toCompletableFuture().get(5, TimeUnit.SECONDS).approved()).isTrue();
        assertThat(decisions.get(1).toCompletableFuture().get(5, TimeUnit.SECONDS).approved()).isFalse();
        assertThat(decisions.get(2).toCompletableFuture().get(5, TimeUnit.SECONDS).approved()).isTrue();
        assertThat(person.pendingErrors()).isEmpty();
        runs.forEach(r -> r.ctx().finish());
    }

    @Test
    void anotherPrincipalCannotUseAConversation() throws Exception {
        RecordingSubscriber alice = new RecordingSubscriber(Principal.of("alice"), true, 100);
        RecordingSubscriber bob = new RecordingSubscriber(Principal.of("bob"), true, 100);
        hub.submit(ask("c1", "hi"), alice);
        runtime.next().ctx().finish();
        alice.until(Event::terminal, WAIT);
        hub.submit(ask("c1", "hi"), bob);
        assertThat(bob.nextError(WAIT).code()).isEqualTo(ErrorCode.FORBIDDEN);
        hub.submit(new Command.Subscribe("c1", 0, false), bob);
        assertThat(bob.nextError(WAIT).code()).isEqualTo(ErrorCode.FORBIDDEN);
        assertThat(bob.pending()).isEmpty();
    }

    @Test
    void aLiveJoinMayComeBeforeTheConversationExistsAndSeesItsFirstRun() throws Exception {
        RecordingSubscriber early = new RecordingSubscriber(Principal.of("alice"), false, 100);
        RecordingSubscriber alice = new RecordingSubscriber(Principal.of("alice"), true, 100);
        hub.submit(Command.Subscribe.live("new-1"), early);
        Thread.sleep(50);
        assertThat(early.pendingErrors()).isEmpty();
        hub.submit(ask("new-1", "hi"), alice);
        runtime.next().ctx().finish();
        assertThat(early.until(Event::terminal, WAIT)).hasSize(2);
    }

    @Test
    void anEarlyJoinerOfAnotherPrincipalIsDroppedWhenTheConversationIsCreated() throws Exception {
        RecordingSubscriber mallory = new RecordingSubscriber(Principal.of("mallory"), false, 100);
        RecordingSubscriber alice = new RecordingSubscriber(Principal.of("alice"), true, 100);
        hub.submit(Command.Subscribe.live("new-2"), mallory);
        Thread.sleep(50);
        hub.submit(ask("new-2", "secret"), alice);
        runtime.next().ctx().finish();
        alice.until(Event::terminal, WAIT);
        assertThat(mallory.nextError(WAIT).code()).isEqualTo(ErrorCode.FORBIDDEN);
        assertThat(mallory.pending()).isEmpty();
    }

    @Test
    void subscribeReplaysStoredEventsAfterTheCursorThenLiveOnes() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "hi"), a);
        ManualRuntime.Started run = runtime.next();
        run.ctx().emit(new Event.StepStarted("thinking"));
        a.until(e -> e.kind() == Event.Kind.STEP_STARTED, WAIT);

        RecordingSubscriber late = new RecordingSubscriber();
        hub.submit(new Command.Subscribe("c1", 1, false), late);
        assertThat(late.next(WAIT).seq()).isEqualTo(2);
        run.ctx().finish();
        assertThat(late.next(WAIT).event()).isEqualTo(new Event.RunFinished());
    }

    @Test
    void joiningWithoutACursorMidRunReplaysTheRunFromItsStartOnceWithItsApproval() throws Exception {
        RecordingSubscriber starter = new RecordingSubscriber();
        hub.submit(ask("mid", "report"), starter);
        ManualRuntime.Started run = runtime.next();
        run.ctx().emit(new Event.StepStarted("thinking"));
        run.ctx().requestApproval(new ApprovalRequest("call_1", "t", "d", null, "r", RiskLevel.HIGH));
        starter.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT);

        RecordingSubscriber late = new RecordingSubscriber();
        hub.submit(Command.Subscribe.live("mid"), late);
        assertThat(late.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT))
                .extracting(e -> e.event().kind())
                .containsExactly(Event.Kind.RUN_STARTED, Event.Kind.STEP_STARTED, Event.Kind.APPROVAL_REQUESTED);
        run.ctx().emit(new Event.StepFinished("thinking"));
        assertThat(late.next(WAIT).event().kind()).isEqualTo(Event.Kind.STEP_FINISHED);
        assertThat(late.pending()).isEmpty();
        run.ctx().finish();
    }

    @Test
    void aSubscriberThatFallsBehindIsDroppedAndOthersGoOn() throws Exception {
        RecordingSubscriber slow = new RecordingSubscriber(Principal.ANONYMOUS, true, 2);
        RecordingSubscriber fast = new RecordingSubscriber();
        runOfSteps(slow, fast, 5);
        assertThat(fast.until(Event::terminal, WAIT)).hasSize(6);
        assertThat(slow.isOverflowed()).isTrue();
        assertThat(slow.pending()).hasSize(2);
    }

    /**
     * A run of {@code steps} steps in conversation c1 that {@code asker} starts and {@code watcher}
     * joins after its first event, to its end.
     */
    private void runOfSteps(RecordingSubscriber asker, RecordingSubscriber watcher, int steps) throws Exception {
        hub.submit(ask("c1", "hi"), asker);
        ManualRuntime.Started run = runtime.next();
        hub.submit(new Command.Subscribe("c1", 1, false), watcher);
        for (int i = 0; i < steps; i++) {
            run.ctx().emit(new Event.StepStarted("s" + i));
        }
        run.ctx().finish();
    }

    /** A subscriber whose {@code deliver} throws at the event with this seq (and after it). */
    private static RecordingSubscriber throwingAt(long seq) {
        return new RecordingSubscriber() {
            @Override
            public boolean deliver(Envelope e) {
                if (e.seq() >= seq) {
                    throw new IllegalStateException("a plugin's bug at seq " + e.seq());
                }
                return super.deliver(e);
            }
        };
    }

    @Test
    void aSubscriberThatThrowsIsDroppedAsOneThatFellBehindAndTheEventStillReachesTheOthersAndTheStore()
            throws Exception {
        RecordingSubscriber broken = throwingAt(3);
        RecordingSubscriber other = new RecordingSubscriber();
        try (LogCapture logs = LogCapture.of(ConversationHub.class)) {
            runOfSteps(broken, other, 4);
            List<Envelope> got = other.until(Event::terminal, WAIT);
            assertThat(got).extracting(Envelope::seq).containsExactly(2L, 3L, 4L, 5L, 6L);
            assertThat(broken.isOverflowed()).as("told it is dropped").isTrue();
            assertThat(broken.pending()).extracting(Envelope::seq).containsExactly(1L, 2L);
            assertThat(logs.messages(Level.ERROR)).anyMatch(m -> m.contains("seq 3") && m.contains("c1"));
            hub.flushed().get(5, TimeUnit.SECONDS);
            assertThat(store.events("c1", 0, 100)).extracting(Envelope::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        }
    }

    @Test
    void aRunGoesOnAfterItsClientDisconnects() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "hi"), a);
        ManualRuntime.Started run = runtime.next();
        a.next(WAIT);
        hub.disconnected(a);
        run.ctx().emit(new Event.MessageStarted("m", Role.ASSISTANT));
        run.ctx().emit(new Event.TextDelta("m", "done"));
        run.ctx().emit(new Event.MessageCompleted("m", "done", List.of()));
        run.ctx().finish();
        RecordingSubscriber back = new RecordingSubscriber();
        hub.submit(new Command.Subscribe("c1", 0, false), back);
        assertThat(back.until(Event::terminal, WAIT)).hasSize(5);
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.messages("c1")).extracting(InputMessage::content).containsExactly("hi", "done");
    }

    @Test
    void historyHoldsEarlierMessagesButNotTheRunsOwn() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "first"), a);
        ManualRuntime.Started one = runtime.next();
        one.ctx().emit(new Event.MessageCompleted("m1", "answer one", List.of()));
        one.ctx().finish();
        a.until(Event::terminal, WAIT);
        hub.submit(ask("c1", "second"), a);
        ManualRuntime.Started two = runtime.next();
        assertThat(two.ctx().history()).extracting(InputMessage::content).containsExactly("first", "answer one");
        two.ctx().finish();
    }

    /** {@link #store}, counting in {@code asked} the times it is asked which message ids a conversation holds. */
    private ConversationStore countingKnownIdQueries(AtomicInteger asked) {
        return counting("knownMessageIds", asked);
    }

    /** {@link #store}, counting in {@code calls} the calls of its method {@code name}. */
    private ConversationStore counting(String name, AtomicInteger calls) {
        return (ConversationStore) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ConversationStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals(name)) {
                        calls.incrementAndGet();
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void resentMessagesAreToldFromNewOnesFromMemoryInAConversationTheHubCreatedAndFromTheStoreAfterARestart()
            throws Exception {
        AtomicInteger asked = new AtomicInteger();
        ConversationStore counting = countingKnownIdQueries(asked);
        InputMessage first = InputMessage.text("u1", Role.USER, "first");
        InputMessage answer = InputMessage.text("m1", Role.ASSISTANT, "answer one");
        InputMessage second = InputMessage.text("u2", Role.USER, "second");
        InputMessage third = InputMessage.text("u3", Role.USER, "third");
        RecordingSubscriber a = new RecordingSubscriber();
        try (ConversationHub own = ConversationHub.builder().store(counting).runtime(runtime).build()) {
            own.submit(withMessages("c1", List.of(first)), a);
            ManualRuntime.Started one = runtime.next();
            one.ctx().emit(new Event.MessageCompleted("m1", "answer one", List.of()));
            one.ctx().finish();
            a.until(Event::terminal, WAIT);
            // As AG-UI clients do: the whole history again, with one new message.
            own.submit(withMessages("c1", List.of(first, answer, second)), a);
            ManualRuntime.Started two = runtime.next();
            assertThat(two.request().messages()).containsExactly(second);
            assertThat(asked).as("the hub created the conversation: it knows every message of it").hasValue(0);
            two.ctx().finish();
            a.until(Event::terminal, WAIT);
        }
        try (ConversationHub restarted = ConversationHub.builder().store(counting).runtime(runtime).build()) {
            RecordingSubscriber b = new RecordingSubscriber();
            restarted.submit(withMessages("c1", List.of(first, answer, second, third)), b);
            ManualRuntime.Started three = runtime.next();
            assertThat(three.request().messages()).containsExactly(third);
            assertThat(asked).as("loaded from the store: the store's index tells").hasValue(1);
            three.ctx().finish();
            b.until(Event::terminal, WAIT);
        }
    }

    /** More user messages than the 512 ids a conversation keeps in memory. */
    private static List<InputMessage> longHistory() {
        List<InputMessage> history = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            history.add(InputMessage.text("u" + i, Role.USER, "message " + i));
        }
        return history;
    }

    @Test
    void aHistoryLongerThanTheIdsKeptInMemoryIsToldFromTheStore() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        ConversationStore counting = countingKnownIdQueries(asked);
        List<InputMessage> history = longHistory();
        InputMessage fresh = InputMessage.text("u-new", Role.USER, "one more");
        RecordingSubscriber a = new RecordingSubscriber();
        try (ConversationHub own = ConversationHub.builder().store(counting).runtime(runtime).build()) {
            own.submit(withMessages("c1", history), a);
            ManualRuntime.Started one = runtime.next();
            assertThat(one.request().messages()).hasSize(600);
            one.ctx().finish();
            a.until(Event::terminal, WAIT);
            // Stored, so no longer on their way from memory.
            own.flushed().get(5, TimeUnit.SECONDS);
            List<InputMessage> resent = new ArrayList<>(history);
            resent.add(fresh);
            own.submit(withMessages("c1", resent), a);
            ManualRuntime.Started two = runtime.next();
            assertThat(two.request().messages()).containsExactly(fresh);
            assertThat(asked).as("too many ids to keep: the store's index tells").hasValue(1);
            two.ctx().finish();
            a.until(Event::terminal, WAIT);
        }
    }

    @Test
    void aNewMessageAloneAfterALongHistoryIsToldNewWithoutTheStore() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        ConversationStore counting = countingKnownIdQueries(asked);
        List<InputMessage> history = longHistory();
        RecordingSubscriber a = new RecordingSubscriber();
        try (ConversationHub own = ConversationHub.builder().store(counting).runtime(runtime).build()) {
            own.submit(withMessages("c1", history), a);
            ManualRuntime.Started one = runtime.next();
            one.ctx().emit(new Event.MessageCompleted("m1", "answer one", List.of()));
            one.ctx().finish();
            a.until(Event::terminal, WAIT);
            // As HAI clients and the load generator do: the new message alone, run after run.
            for (int i = 0; i < 3; i++) {
                InputMessage fresh = InputMessage.text("u-new" + i, Role.USER, "one more");
                own.submit(withMessages("c1", List.of(fresh)), a);
                ManualRuntime.Started next = runtime.next();
                assertThat(next.request().messages()).containsExactly(fresh);
                next.ctx().finish();
                a.until(Event::terminal, WAIT);
            }
            assertThat(asked).as("the filter of every id tells a new one without the store").hasValue(0);
            // One it holds is still told known: an answer of the runtime's, resent with a new message.
            InputMessage answer = InputMessage.text("m1", Role.ASSISTANT, "answer one");
            InputMessage last = InputMessage.text("u-last", Role.USER, "last");
            own.submit(withMessages("c1", List.of(answer, last)), a);
            ManualRuntime.Started end = runtime.next();
            assertThat(end.request().messages()).containsExactly(last);
            end.ctx().finish();
            a.until(Event::terminal, WAIT);
        }
    }

    @Test
    void cancelEndsTheRunWithCancelledAndTellsTheRuntime() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "slow"), a);
        ManualRuntime.Started run = runtime.next();
        a.next(WAIT);
        hub.submit(new Command.CancelRun("c1", null), a);
        Envelope end = a.next(WAIT);
        assertThat(end.event()).isEqualTo(new Event.RunFailed(ErrorCode.CANCELLED, "the run was cancelled"));
        assertThat(run.cancelled()).isTrue();
        assertThat(run.ctx().isDone()).isTrue();
        run.ctx().emit(new Event.StepStarted("late"));
        Thread.sleep(50);
        assertThat(a.pending()).isEmpty();
    }

    @Test
    void aRunTheRuntimeFailsIsLoggedAtWarnWithItsIdsAndErrorCode() throws Exception {
        try (LogCapture logs = LogCapture.of(ConversationHub.class)) {
            RecordingSubscriber a = new RecordingSubscriber();
            hub.submit(ask("c-failing", "hi"), a);
            ManualRuntime.Started run = runtime.next();
            run.ctx().fail(ErrorCode.UPSTREAM_FAILED, "the model server answered HTTP 500");
            a.until(Event::terminal, WAIT);

            logs.await(Level.WARN, WAIT, "c-failing", run.request().runId(), "upstream_error",
                    "the model server answered HTTP 500");
        }
    }

    @Test
    void aRunItsClientCancelsIsLoggedAtInfoNotWarn() throws Exception {
        try (LogCapture logs = LogCapture.of(ConversationHub.class)) {
            RecordingSubscriber a = new RecordingSubscriber();
            hub.submit(ask("c-cancelled", "slow"), a);
            ManualRuntime.Started run = runtime.next();
            hub.submit(new Command.CancelRun("c-cancelled", null), a);
            a.until(Event::terminal, WAIT);

            logs.await(Level.INFO, WAIT, "c-cancelled", run.request().runId(), "cancelled");
            assertThat(logs.messages(Level.WARN)).isEmpty();
        }
    }

    @Test
    void aResumeMustAnswerEveryPendingApprovalAndNothingElse() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(ask("c1", "two tools"), person);
        ManualRuntime.Started run = runtime.next();
        CompletionStage<ApprovalDecision> first = run.ctx().requestApproval(
                new ApprovalRequest("call_1", "a", "d", null, "r", RiskLevel.LOW));
        CompletionStage<ApprovalDecision> second = run.ctx().requestApproval(
                new ApprovalRequest("call_2", "b", "d", null, "r", RiskLevel.LOW));
        List<Envelope> got = person.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED
                && ((Event.ApprovalRequested) e).toolName().equals("b"), WAIT);
        String a = ((Event.ApprovalRequested) got.get(got.size() - 2).event()).approvalId();
        String b = ((Event.ApprovalRequested) got.get(got.size() - 1).event()).approvalId();

        hub.submit(new Command.Resume("c1", List.of(new Command.DecideApproval(a, true, null, null))), person);
        GatewayError partial = person.nextError(WAIT);
        assertThat(partial.code()).isEqualTo(ErrorCode.INVALID_FIELD);
        assertThat(partial.message()).contains("unanswered: [" + b + "]");
        assertThat(first.toCompletableFuture()).isNotDone();

        hub.submit(new Command.Resume("c1", List.of(new Command.DecideApproval(a, true, null, null),
                new Command.DecideApproval(b, false, "no", null))), person);
        assertThat(first.toCompletableFuture().get(5, TimeUnit.SECONDS).approved()).isTrue();
        assertThat(second.toCompletableFuture().get(5, TimeUnit.SECONDS).approved()).isFalse();
        run.ctx().finish();
    }

    @Test
    void anApprovalPendingAtShutdownContinuesInANewRunAfterARestart() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(ask("c1", "report"), person);
        ManualRuntime.Started run = runtime.next();
        run.ctx().requestApproval(new ApprovalRequest("call_1", "generate_inspection_report", "d", null, "r",
                RiskLevel.HIGH));
        String id = ((Event.ApprovalRequested) person.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT)
                .get(1).event()).approvalId();
        hub.shutdown(Duration.ZERO).get(5, TimeUnit.SECONDS);
        assertThat(store.approval(id)).get().extracting(ApprovalRecord::status).isEqualTo(ApprovalRecord.Status.PENDING);

        hub = ConversationHub.builder().store(store).runtime(runtime).build();
        RecordingSubscriber back = new RecordingSubscriber();
        hub.submit(new Command.Subscribe("c1", -1, false), back);
        hub.submit(new Command.Resume("c1", List.of(new Command.DecideApproval(id, true, "go", null))), back);
        List<ApprovalRecord> decided = runtime.resumed.poll(5, TimeUnit.SECONDS);
        assertThat(decided).singleElement().satisfies(a -> {
            assertThat(a.status()).isEqualTo(ApprovalRecord.Status.APPROVED);
            assertThat(a.feedback()).isEqualTo("go");
        });
        ManualRuntime.Started continued = runtime.next();
        assertThat(continued.request().parentRunId()).isEqualTo(run.request().runId());
        continued.ctx().finish();
        assertThat(back.until(Event::terminal, WAIT)).extracting(e -> e.event().kind())
                .containsExactly(Event.Kind.RUN_STARTED, Event.Kind.APPROVAL_RESOLVED, Event.Kind.RUN_FINISHED);
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.approval(id)).get().extracting(ApprovalRecord::status).isEqualTo(ApprovalRecord.Status.APPROVED);
    }

    @Test
    void shutdownSuspendsARunThatWaitsForAnApprovalAtOnceWhileAStreamingRunKeepsItsGrace() throws Exception {
        RecordingSubscriber waiter = new RecordingSubscriber();
        hub.submit(ask("c-waits", "report"), waiter);
        ManualRuntime.Started waiting = runtime.next();
        CompletionStage<ApprovalDecision> decision = waiting.ctx().requestApproval(
                new ApprovalRequest("call_1", "generate_inspection_report", "d", null, "r", RiskLevel.HIGH));
        String id = ((Event.ApprovalRequested) waiter.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT)
                .get(1).event()).approvalId();
        RecordingSubscriber reader = new RecordingSubscriber();
        hub.submit(ask("c-streams", "slow"), reader);
        ManualRuntime.Started streaming = runtime.next();
        reader.next(WAIT);

        CompletableFuture<Void> stopping = hub.shutdown(Duration.ofSeconds(30));

        assertThat(waiter.next(WAIT).event()).isInstanceOf(Event.RunFailed.class)
                .extracting(e -> ((Event.RunFailed) e).code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(decision.toCompletableFuture()).failsWithin(WAIT);
        // What the store holds once the writes queued so far are in (a client sees events before they are stored).
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.approval(id)).get().extracting(ApprovalRecord::status).isEqualTo(ApprovalRecord.Status.PENDING);
        assertThat(stopping).as("the streaming run still has its grace").isNotDone();
        streaming.ctx().emit(new Event.TextDelta("m1", "still going"));
        streaming.ctx().finish();
        stopping.get(5, TimeUnit.SECONDS);
        assertThat(reader.until(Event::terminal, WAIT)).extracting(e -> e.event().kind())
                .containsExactly(Event.Kind.TEXT_DELTA, Event.Kind.RUN_FINISHED);
    }

    @Test
    void aRunThatComesToWaitForAnApprovalDuringTheGraceIsSuspendedThen() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(ask("c-later", "report"), person);
        ManualRuntime.Started run = runtime.next();
        person.next(WAIT);
        CompletableFuture<Void> stopping = hub.shutdown(Duration.ofSeconds(30));

        CompletionStage<ApprovalDecision> decision = run.ctx().requestApproval(
                new ApprovalRequest("call_1", "generate_inspection_report", "d", null, "r", RiskLevel.HIGH));

        List<Envelope> rest = person.until(Event::terminal, WAIT);
        assertThat(rest).extracting(e -> e.event().kind())
                .containsExactly(Event.Kind.APPROVAL_REQUESTED, Event.Kind.RUN_FAILED);
        assertThat(((Event.RunFailed) rest.get(1).event()).code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(decision.toCompletableFuture()).isCompletedExceptionally();
        stopping.get(5, TimeUnit.SECONDS);
        String id = ((Event.ApprovalRequested) rest.get(0).event()).approvalId();
        assertThat(store.approval(id)).get().extracting(ApprovalRecord::status).isEqualTo(ApprovalRecord.Status.PENDING);
    }

    @Test
    void approvalsOfACancelledRunAreCancelledNotLeftPending() throws Exception {
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(ask("c1", "report"), person);
        ManualRuntime.Started run = runtime.next();
        CompletionStage<ApprovalDecision> d = run.ctx().requestApproval(
                new ApprovalRequest("call_1", "t", "d", null, "r", RiskLevel.HIGH));
        person.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT);
        hub.submit(new Command.CancelRun("c1", null), person);
        person.until(Event::terminal, WAIT);
        assertThat(d.toCompletableFuture()).isCompletedExceptionally();
        Thread.sleep(50);
        assertThat(store.pendingApprovals("c1")).isEmpty();
    }

    @Test
    void anApprovalAskedFromOutsideAnyRunReachesAPersonWhoJoinsLater() throws Exception {
        ApprovalRecord asked = hub.requestApproval("ext-1", new ApprovalRequest("call_9", "process_payment",
                "pay the merchant", Json.object().put("amount", 100), "", RiskLevel.HIGH)).get(5, TimeUnit.SECONDS);
        assertThat(asked.runId()).isNull();
        assertThat(store.approval(asked.approvalId())).as("stored when the request completes").isPresent();
        RecordingSubscriber person = new RecordingSubscriber();
        hub.submit(Command.Subscribe.live("ext-1"), person);
        Envelope shown = person.next(WAIT);
        assertThat(shown.event()).isEqualTo(asked.request());
        hub.submit(new Command.DecideApproval(asked.approvalId(), true, "paid", null), person);
        Envelope resolved = person.next(WAIT);
        assertThat(resolved.event()).isEqualTo(new Event.ApprovalResolved(asked.approvalId(), true, "paid", "anonymous"));
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.approval(asked.approvalId())).get().extracting(ApprovalRecord::status)
                .isEqualTo(ApprovalRecord.Status.APPROVED);
        hub.submit(new Command.DecideApproval(asked.approvalId(), false, null, null), person);
        assertThat(person.nextError(WAIT).code()).isEqualTo(ErrorCode.CONFLICT);
    }

    @Test
    void anOperatorDecidesARunsApprovalAndTheRunGoesOn() throws Exception {
        RecordingSubscriber voice = new RecordingSubscriber(Principal.ANONYMOUS, false, 100);
        hub.submit(ask("op-1", "report"), voice);
        ManualRuntime.Started run = runtime.next();
        CompletionStage<ApprovalDecision> d = run.ctx().requestApproval(
                new ApprovalRequest("call_1", "generate_inspection_report", "d", null, "r", RiskLevel.HIGH));
        voice.until(e -> e.kind() == Event.Kind.APPROVAL_REQUESTED, WAIT);
        List<ApprovalRecord> pending = hub.pendingApprovals(10, 0);
        assertThat(pending).extracting(ApprovalRecord::conversationId).containsExactly("op-1");
        assertThat(hub.decideAsOperator(pending.get(0).approvalId(), true, "ok", null, Principal.of("a2h"))
                .get(5, TimeUnit.SECONDS)).isNull();
        assertThat(store.approval(pending.get(0).approvalId())).as("stored when the decision completes").get()
                .extracting(ApprovalRecord::status).isEqualTo(ApprovalRecord.Status.APPROVED);
        assertThat(d.toCompletableFuture().get(5, TimeUnit.SECONDS).decidedBy()).isEqualTo(Principal.of("a2h"));
        assertThat(hub.decideAsOperator(pending.get(0).approvalId(), true, "again", null, Principal.of("a2h"))
                .get(5, TimeUnit.SECONDS).code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(hub.decideAsOperator("appr_missing", true, null, null, Principal.of("a2h"))
                .get(5, TimeUnit.SECONDS).code()).isEqualTo(ErrorCode.NOT_FOUND);
        run.ctx().finish();
    }

    @Test
    void anOutsideApprovalPendingAtShutdownIsDecidedAfterARestart() throws Exception {
        ApprovalRecord asked = hub.requestApproval("ext-2", new ApprovalRequest("call_1", "f", "", null, "",
                RiskLevel.LOW)).get(5, TimeUnit.SECONDS);
        hub.shutdown(Duration.ZERO).get(5, TimeUnit.SECONDS);
        hub = ConversationHub.builder().store(store).runtime(runtime).build();
        assertThat(hub.decideAsOperator(asked.approvalId(), false, "no", null, Principal.of("a2h"))
                .get(5, TimeUnit.SECONDS)).isNull();
        assertThat(store.approval(asked.approvalId())).get().extracting(ApprovalRecord::status)
                .isEqualTo(ApprovalRecord.Status.REJECTED);
        assertThat(hub.decideAsOperator(asked.approvalId(), true, null, null, Principal.of("a2h"))
                .get(5, TimeUnit.SECONDS).code()).isEqualTo(ErrorCode.CONFLICT);
    }

    @Test
    void shutdownFailsRunsStillActiveAfterTheGrace() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("c1", "hi"), a);
        runtime.next();
        a.next(WAIT);
        hub.shutdown(Duration.ofMillis(100)).get(5, TimeUnit.SECONDS);
        assertThat(a.next(WAIT).event()).isInstanceOf(Event.RunFailed.class)
                .extracting(e -> ((Event.RunFailed) e).code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(store.events("c1", 0, 10)).hasSize(2);
        hub.submit(ask("c2", "hi"), a);
        assertThat(a.nextError(WAIT).code()).isEqualTo(ErrorCode.UNAVAILABLE);
    }

    @Test
    void aRunStartsOnTheThreadThatAsksForItWhenNothingOnTheWayWaits() throws Exception {
        runtime.startsWithoutWaiting = true;
        RecordingSubscriber a = new RecordingSubscriber(Principal.of("alice"), true, 100);
        hub.submit(ask("here", "one"), a);
        ManualRuntime.Started first = runtime.runs.poll();
        assertThat(first).as("a conversation the store surely lacks starts before submit returned").isNotNull();
        assertThat(first.thread()).isSameAs(Thread.currentThread());
        first.ctx().finish();
        a.until(Event::terminal, WAIT);

        // Another connection of the same person, whose commands wait behind none (the first one's
        // lane may still be closing on its worker).
        RecordingSubscriber again = new RecordingSubscriber(Principal.of("alice"), true, 100);
        hub.submit(ask("here", "two"), again);
        ManualRuntime.Started second = runtime.runs.poll();
        assertThat(second).as("started before submit returned").isNotNull();
        assertThat(second.thread()).isSameAs(Thread.currentThread());
        assertThat(again.next(WAIT).event()).as("its start reached the subscriber").isInstanceOf(Event.RunStarted.class);
        second.ctx().emit(new Event.TextDelta("m", "x"));
        second.ctx().finish();
        assertThat(again.until(Event::terminal, WAIT)).extracting(Envelope::seq).containsExactly(4L, 5L);
        assertThat(a.until(Event::terminal, WAIT)).as("the first connection sees the run too")
                .extracting(Envelope::seq).containsExactly(3L, 4L, 5L);

        hub.submit(ask("here", "three"), a);
        hub.submit(ask("here", "four"), a);
        assertThat(a.nextError(WAIT).code()).as("the second while the first runs").isEqualTo(ErrorCode.BUSY);
        ManualRuntime.Started third = runtime.next();
        assertThat(third.request().messages()).extracting(InputMessage::content).containsExactly("three");
        assertThat(runtime.runs).isEmpty();
        third.ctx().finish();
        a.until(Event::terminal, WAIT);

        RecordingSubscriber bob = new RecordingSubscriber(Principal.of("bob"), true, 100);
        hub.submit(ask("here", "mine now"), bob);
        assertThat(bob.nextError(WAIT).code()).as("another principal, in memory or not").isEqualTo(ErrorCode.FORBIDDEN);
        assertThat(runtime.runs).isEmpty();
    }

    /** A subscriber that checks, as each event reaches it, that {@code store} holds a reservation of its seq. */
    private static RecordingSubscriber shownOnceReserved(InMemoryConversationStore store) {
        return shownOnceReserved(store, Principal.ANONYMOUS, true, Integer.MAX_VALUE);
    }

    /** As {@link #shownOnceReserved(InMemoryConversationStore)}, with these of {@link RecordingSubscriber}'s settings. */
    private static RecordingSubscriber shownOnceReserved(InMemoryConversationStore store, Principal principal,
                                                         boolean answersApprovals, int capacity) {
        return new RecordingSubscriber(principal, answersApprovals, capacity) {
            @Override
            public boolean deliver(Envelope e) {
                assertThat(store.lastSeq(e.conversationId())).as("reserved before seq " + e.seq() + " is shown")
                        .isGreaterThanOrEqualTo(e.seq());
                return super.deliver(e);
            }
        };
    }

    /** What a test does to a write of seq reservations before the store takes it. */
    @FunctionalInterface
    private interface ReservationHook {
        void before(StoreBatch batch) throws Exception;
    }

    /** {@code inner}, but every write that reserves seqs passes {@code hook} first, on the writing thread. */
    private ConversationStore reservingThrough(InMemoryConversationStore inner, ReservationHook hook) {
        return (ConversationStore) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ConversationStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("write") && !((StoreBatch) args[0]).reservations().isEmpty()) {
                        hook.before((StoreBatch) args[0]);
                    }
                    try {
                        return method.invoke(inner, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aNewConversationsRunStartsHereAndItsEventsWaitUnseenUntilAWorkerStoresTheirReservation() throws Exception {
        hub.close();
        runtime.startsWithoutWaiting = true;
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.CountDownLatch letReserve = new java.util.concurrent.CountDownLatch(1);
        List<String> reservedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger reservations = new AtomicInteger();
        ConversationStore slow = reservingThrough(inner, batch -> {
            reservedOn.add(Thread.currentThread().getName());
            assertThat(letReserve.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            if (reservations.incrementAndGet() == 1) {
                throw new IllegalStateException("disk full (the first try)");
            }
        });
        RecordingSubscriber a = shownOnceReserved(inner);
        try (LogCapture logs = LogCapture.of(ConversationHub.class);
             ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build()) {
            own.submit(ask("brand-new", "one"), a);
            ManualRuntime.Started run = runtime.runs.poll();
            assertThat(run).as("started before submit returned").isNotNull();
            assertThat(run.thread()).isSameAs(Thread.currentThread());
            run.ctx().emit(new Event.TextDelta("m", "x"));
            run.ctx().finish();
            Thread.sleep(200);
            assertThat(a.pending()).as("nothing shown before the reservation is stored").isEmpty();
            assertThat(inner.events("brand-new", 0, 10)).as("nor stored").isEmpty();

            letReserve.countDown();
            List<Envelope> got = a.until(Event::terminal, WAIT);
            assertThat(got).extracting(e -> e.event().kind()).containsExactly(Event.Kind.RUN_STARTED,
                    Event.Kind.TEXT_DELTA, Event.Kind.RUN_FINISHED);
            assertThat(got).extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
            assertThat(reservations).as("a failed reservation is tried again").hasValue(2);
            assertThat(reservedOn).allMatch(name -> name.startsWith("switchboard-hub"));
            assertThat(logs.messages(Level.ERROR)).anyMatch(m -> m.contains("brand-new"));
            own.flushed().get(5, TimeUnit.SECONDS);
            assertThat(inner.events("brand-new", 0, 10)).isEqualTo(got);

            RecordingSubscriber b = new RecordingSubscriber();
            own.submit(ask("brand-new", "two"), b);
            ManualRuntime.Started second = runtime.runs.poll();
            assertThat(second).as("its reservation has room: started here, shown at once").isNotNull();
            second.ctx().finish();
            assertThat(b.until(Event::terminal, WAIT)).extracting(Envelope::seq).containsExactly(4L, 5L);
            assertThat(reservations).as("no other reservation").hasValue(2);
        }
    }

    @Test
    void newConversationsThatStartWhileAReservationIsBeingStoredHaveTheirsStoredTogetherInTheNextWrite()
            throws Exception {
        hub.close();
        runtime.startsWithoutWaiting = true;
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.CountDownLatch letFirst = new java.util.concurrent.CountDownLatch(1);
        List<List<String>> writes = new java.util.concurrent.CopyOnWriteArrayList<>();
        ConversationStore slow = reservingThrough(inner, batch -> {
            writes.add(batch.reservations().stream().map(StoreBatch.Reservation::conversationId).toList());
            if (writes.size() == 1) {
                assertThat(letFirst.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            }
        });
        int others = 9;
        try (ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build()) {
            List<RecordingSubscriber> subscribers = new ArrayList<>();
            for (int i = 0; i <= others; i++) {
                RecordingSubscriber s = shownOnceReserved(inner);
                subscribers.add(s);
                own.submit(ask("new-" + i, "hello"), s);
                ManualRuntime.Started run = runtime.runs.poll();
                assertThat(run).as("started here").isNotNull();
                run.ctx().emit(new Event.TextDelta("m", "x" + i));
                run.ctx().finish();
                if (i == 0) {
                    long deadline = System.nanoTime() + WAIT.toNanos();
                    while (writes.isEmpty() && System.nanoTime() < deadline) {
                        Thread.sleep(5);
                    }
                    assertThat(writes).as("the first reservation is on its way").hasSize(1);
                }
            }
            Thread.sleep(100);
            assertThat(writes).as("the others wait for the write on its way").hasSize(1);
            assertThat(subscribers).allMatch(s -> s.pending().isEmpty());

            letFirst.countDown();
            for (int i = 0; i <= others; i++) {
                assertThat(subscribers.get(i).until(Event::terminal, WAIT)).as("conversation new-" + i)
                        .extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
            }
            assertThat(writes).as("one write for the first, one for the nine that came while it was stored")
                    .hasSize(2);
            assertThat(writes.get(0)).containsExactly("new-0");
            assertThat(writes.get(1)).containsExactlyInAnyOrderElementsOf(
                    java.util.stream.IntStream.rangeClosed(1, others).mapToObj(i -> "new-" + i).toList());
            own.flushed().get(5, TimeUnit.SECONDS);
            for (int i = 0; i <= others; i++) {
                assertThat(inner.events("new-" + i, 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
            }
        }
    }

    @Test
    void aSubscriberThatThrowsWhileItsEventsWaitedForTheirReservationKeepsNoOtherConversationWaiting()
            throws Exception {
        hub.close();
        runtime.startsWithoutWaiting = true;
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.CountDownLatch letFirst = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        ConversationStore slow = reservingThrough(inner, batch -> {
            if (writes.incrementAndGet() == 1) {
                assertThat(letFirst.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            }
        });
        try (LogCapture logs = LogCapture.of(ConversationHub.class);
             ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build()) {
            // "first" holds the store's first write; the three after it wait, to be stored together.
            List<RecordingSubscriber> subscribers = new ArrayList<>();
            for (String id : List.of("first", "broken", "second", "third")) {
                RecordingSubscriber s = id.equals("broken") ? throwingAt(2) : new RecordingSubscriber();
                subscribers.add(s);
                own.submit(ask(id, "hello"), s);
                ManualRuntime.Started run = runtime.runs.poll();
                assertThat(run).as("started here").isNotNull();
                run.ctx().emit(new Event.TextDelta("m", id));
                run.ctx().finish();
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (writes.get() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
            }
            letFirst.countDown();
            for (int i : new int[] {0, 2, 3}) {
                assertThat(subscribers.get(i).until(Event::terminal, WAIT)).extracting(Envelope::seq)
                        .containsExactly(1L, 2L, 3L);
            }
            RecordingSubscriber broken = subscribers.get(1);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!broken.isOverflowed() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(broken.isOverflowed()).isTrue();
            assertThat(broken.pending()).extracting(Envelope::seq).containsExactly(1L);
            assertThat(logs.messages(Level.ERROR)).anyMatch(m -> m.contains("broken"));

            RecordingSubscriber later = new RecordingSubscriber();
            own.submit(ask("later", "hello"), later);
            ManualRuntime.Started run = runtime.runs.poll();
            assertThat(run).isNotNull();
            run.ctx().finish();
            assertThat(later.until(Event::terminal, WAIT)).as("a new conversation after it is stored and shown")
                    .extracting(Envelope::seq).containsExactly(1L, 2L);
            own.flushed().get(5, TimeUnit.SECONDS);
            assertThat(inner.events("broken", 0, 10)).as("the events it missed are stored")
                    .extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
        }
    }

    @Test
    void eventsWithinTheReservationOnItsWayAreShownOnceItIsStoredAndThoseAfterInOrder() throws Exception {
        hub.close();
        runtime.startsWithoutWaiting = true;
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.Semaphore writes = new java.util.concurrent.Semaphore(0);
        AtomicInteger reservations = new AtomicInteger();
        ConversationStore slow = reservingThrough(inner, batch -> {
            reservations.incrementAndGet();
            assertThat(writes.tryAcquire(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        });
        RecordingSubscriber a = new RecordingSubscriber();
        try (ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build()) {
            own.submit(ask("steady", "one"), a);
            ManualRuntime.Started run = runtime.runs.poll();
            assertThat(run).isNotNull();
            for (int i = 0; i < 3; i++) {
                run.ctx().emit(new Event.TextDelta("m", "x"));
            }
            writes.release();
            List<Envelope> shown = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                shown.add(a.next(WAIT));
            }
            assertThat(shown).extracting(Envelope::seq).containsExactly(1L, 2L, 3L, 4L);
            run.ctx().emit(new Event.TextDelta("m", "y"));
            run.ctx().finish();
            assertThat(a.until(Event::terminal, WAIT)).extracting(Envelope::seq).containsExactly(5L, 6L);
            assertThat(reservations).as("one reservation covers them all").hasValue(1);
            // The clean stop gives back the seqs not used.
            writes.release(1_000);
        }
    }

    @Test
    void eventsPastTheReservationOnItsWayWaitForTheNextAndArriveOnceInOrder() throws Exception {
        // The run passed the reservation on its way before it was stored: a second one follows,
        // stored while the run goes on.
        runAcrossAReservationOnItsWay(65_536 + 5);
    }

    /**
     * A new conversation's run emits {@code 65,546} deltas; the reservation its start sent a worker
     * to store is let through once {@code releaseAt} of them are emitted.
     */
    private void runAcrossAReservationOnItsWay(int releaseAt) throws Exception {
        hub.close();
        runtime.startsWithoutWaiting = true;
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.CountDownLatch letReserve = new java.util.concurrent.CountDownLatch(1);
        List<Long> reservedUpTo = new java.util.concurrent.CopyOnWriteArrayList<>();
        ConversationStore slow = reservingThrough(inner, batch -> {
            assertThat(letReserve.await(WAIT.toMillis() * 6, TimeUnit.MILLISECONDS)).isTrue();
            reservedUpTo.add(batch.reservations().get(0).upTo());
        });
        int deltas = 65_536 + 10;
        RecordingSubscriber a = shownOnceReserved(inner, Principal.of("alice"), true, deltas + 10);
        try (ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build()) {
            own.submit(ask("long", "one"), a);
            ManualRuntime.Started run = runtime.runs.poll();
            assertThat(run).isNotNull();
            Thread emitting = new Thread(() -> {
                for (int i = 0; i < deltas; i++) {
                    if (i == releaseAt) {
                        letReserve.countDown();
                    }
                    run.ctx().emit(new Event.TextDelta("m", "x"));
                }
                run.ctx().finish();
            });
            emitting.start();
            List<Envelope> got = a.until(Event::terminal, Duration.ofSeconds(30));
            emitting.join();
            assertThat(got).hasSize(deltas + 2);
            for (int i = 0; i < got.size(); i++) {
                assertThat(got.get(i).seq()).as("the " + i + "th event").isEqualTo(i + 1);
            }
            assertThat(reservedUpTo).isNotEmpty();
            assertThat(reservedUpTo.get(reservedUpTo.size() - 1)).isGreaterThanOrEqualTo(deltas + 2);
        }
    }

    @Test
    void aCleanStopStoresTheEventsOfARunWhoseReservationWasOnItsWay() throws Exception {
        hub.close();
        runtime.startsWithoutWaiting = true;
        InMemoryConversationStore inner = new InMemoryConversationStore();
        java.util.concurrent.CountDownLatch letReserve = new java.util.concurrent.CountDownLatch(1);
        ConversationStore slow = reservingThrough(inner,
                batch -> assertThat(letReserve.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue());
        RecordingSubscriber a = new RecordingSubscriber();
        ConversationHub own = ConversationHub.builder().store(slow).runtime(runtime).build();
        own.submit(ask("stopping", "one"), a);
        ManualRuntime.Started run = runtime.runs.poll();
        assertThat(run).isNotNull();
        run.ctx().emit(new Event.TextDelta("m", "x"));
        run.ctx().finish();
        CompletableFuture<Void> stopped = own.shutdown(Duration.ZERO);
        Thread.sleep(100);
        assertThat(stopped).as("the stop waits for the reservation on its way").isNotDone();
        letReserve.countDown();
        stopped.get(5, TimeUnit.SECONDS);
        assertThat(a.until(Event::terminal, WAIT)).extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
        assertThat(inner.events("stopping", 0, 10)).extracting(Envelope::seq).containsExactly(1L, 2L, 3L);
        assertThat(inner.lastSeq("stopping")).as("the unused seqs given back").isEqualTo(3);
    }

    @Test
    void aRefusedStartOfANewConversationReservesNothing() throws Exception {
        runtime.startsWithoutWaiting = true;
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("refused", "darn it"), a);
        assertThat(a.nextError(WAIT).code()).isEqualTo(ErrorCode.MODERATION);
        assertThat(runtime.runs).isEmpty();
        hub.flushed().get(5, TimeUnit.SECONDS);
        assertThat(store.lastSeq("refused")).isZero();
        assertThat(store.surelyAbsent("refused")).isTrue();
    }

    /**
     * A conversation of one finished run, asked for on a runtime that starts without waiting; then
     * the hub restarts on the same store, which holds it and memory does not.
     */
    private void storedBeforeARestart(String conversation) throws Exception {
        runtime.startsWithoutWaiting = true;
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask(conversation, "one"), a);
        runtime.next().ctx().finish();
        a.until(Event::terminal, WAIT);
        hub.shutdown(Duration.ZERO).get(5, TimeUnit.SECONDS);
        hub = ConversationHub.builder().store(store).runtime(runtime).build();
    }

    @Test
    void aConversationTheStoreHoldsButMemoryDoesNotStartsOnAWorker() throws Exception {
        storedBeforeARestart("stored");
        assertThat(store.surelyAbsent("stored")).isFalse();
        RecordingSubscriber b = new RecordingSubscriber();
        hub.submit(ask("stored", "two"), b);
        ManualRuntime.Started second = runtime.next();
        assertThat(second.thread()).as("its state is read from the store").isNotSameAs(Thread.currentThread());
        second.ctx().finish();
        assertThat(b.until(Event::terminal, WAIT)).extracting(Envelope::seq).containsExactly(3L, 4L);
    }

    @Test
    void aRunStartsOnAWorkerWhenItsRuntimeMayWait() throws Exception {
        RecordingSubscriber a = new RecordingSubscriber();
        hub.submit(ask("there", "one"), a);
        runtime.next().ctx().finish();
        a.until(Event::terminal, WAIT);
        hub.submit(ask("there", "two"), a);
        ManualRuntime.Started second = runtime.next();
        assertThat(second.thread()).isNotSameAs(Thread.currentThread());
        assertThat(second.thread().getName()).startsWith("switchboard-hub");
        second.ctx().finish();
    }

    @Test
    void aRunWhoseNewMessagesOnlyTheStoreCanTellStartsOnAWorker() throws Exception {
        storedBeforeARestart("restarted");
        // Loaded from the store by another connection's replay: memory does not know every id of its history.
        RecordingSubscriber reader = new RecordingSubscriber();
        hub.submit(new Command.Subscribe("restarted", 0, true), reader);
        reader.until(Event::terminal, WAIT);
        RecordingSubscriber b = new RecordingSubscriber();
        InputMessage repeated = store.messages("restarted").get(0);
        hub.submit(withMessages("restarted", List.of(repeated, InputMessage.text(Ids.next("msg"), Role.USER, "two"))), b);
        ManualRuntime.Started second = runtime.next();
        assertThat(second.thread()).isNotSameAs(Thread.currentThread());
        assertThat(second.request().messages()).as("the store told the first message is not new")
                .extracting(InputMessage::content).containsExactly("two");
        second.ctx().finish();
    }

    @Test
    void aShortHistoryIsReadFromMemoryForARuntimeThatReadsItAndFromTheStoreOnceItGrowsLong() throws Exception {
        hub.close();
        AtomicInteger storeReads = new AtomicInteger();
        ConversationStore counting = counting("messages", storeReads);
        runtime.readsHistory = true;
        runtime.startsWithoutWaiting = true;
        hub = ConversationHub.builder().store(counting).runtime(runtime).build();
        RecordingSubscriber a = new RecordingSubscriber();

        hub.submit(ask("chat", "one"), a);
        ManualRuntime.Started first = runtime.next();
        assertThat(first.ctx().historyInMemory()).as("a new conversation's history is known: empty").isEmpty();
        first.ctx().emit(new Event.MessageCompleted("m1", "Hi", List.of()));
        first.ctx().finish();
        a.until(Event::terminal, WAIT);

        // Another connection, whose commands wait behind none (the first one's lane may still be closing on its worker).
        RecordingSubscriber b = new RecordingSubscriber();
        hub.submit(ask("chat", "two"), b);
        ManualRuntime.Started second = runtime.runs.poll();
        assertThat(second).as("started on the submitting thread").isNotNull();
        List<InputMessage> remembered = second.ctx().historyInMemory();
        assertThat(remembered).extracting(InputMessage::role, InputMessage::content)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Role.USER, "one"),
                        org.assertj.core.groups.Tuple.tuple(Role.ASSISTANT, "Hi"));
        assertThat(second.ctx().history()).isEqualTo(remembered);
        assertThat(storeReads).as("the store was not asked for the history").hasValue(0);
        second.ctx().emit(new Event.MessageCompleted("m2", "x".repeat(20_000), List.of()));
        second.ctx().finish();
        b.until(Event::terminal, WAIT);
        a.until(Event::terminal, WAIT);

        hub.submit(ask("chat", "three"), a);
        ManualRuntime.Started third = runtime.next();
        assertThat(third.ctx().historyInMemory()).as("a history too long for memory").isNull();
        List<InputMessage> read = third.ctx().history();
        assertThat(storeReads).as("read from the store instead").hasValue(1);
        assertThat(read).extracting(InputMessage::content).containsExactly("one", "Hi", "two", "x".repeat(20_000));
        third.ctx().finish();
        a.until(Event::terminal, WAIT);
        hub.close();
        assertThat(store.messages("chat")).as("what memory gave is what the store holds")
                .startsWith(remembered.toArray(new InputMessage[0]));

        runtime.readsHistory = false;
        hub = ConversationHub.builder().store(store).runtime(runtime).build();
        hub.submit(ask("other", "one"), a);
        ManualRuntime.Started elsewhere = runtime.next();
        assertThat(elsewhere.ctx().historyInMemory()).as("a runtime that does not read the history: none kept")
                .isNull();
        assertThat(elsewhere.ctx().history()).isEmpty();
        elsewhere.ctx().finish();
    }
}
