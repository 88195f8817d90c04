package dev.switchboard.adapter.a2h;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Envelope;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;
import dev.switchboard.core.Principal;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.ConversationStore;
import dev.switchboard.core.spi.OperatorApprovals;
import dev.switchboard.core.spi.RestResponse;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Function calls and contact requests: each one an approval of the hub, asked in the
 * conversation its channel reaches, and its status read back from that approval's decision.
 *
 * <p>A call is stored as a document of its kind's collection, keyed by {@code call_id}:
 * {@code {call: {run_id, call_id, spec}, approval_id, conversation_id, requested_at, option_name?}};
 * an index collection maps each approval id back to its call. A pending approval of the hub
 * that is not in the index was raised by a run (from any dialect) and is shown as a function
 * call whose {@code call_id} is the approval id.
 */
final class A2hCalls {
    /** The two kinds of call, each with its own collection and ids. */
    enum Kind {
        FUNCTION_CALL("a2h_function_calls", "function call"),
        HUMAN_CONTACT("a2h_human_contacts", "contact request");

        final String collection;
        final String noun;

        Kind(String collection, String noun) {
            this.collection = collection;
            this.noun = noun;
        }
    }

    static final String INDEX = "a2h_approvals";
    /** The tool name a contact request is shown under: a question rather than a function. */
    static final String CONTACT_TOOL = "human_contact";
    /** How long a request may wait for the hub before it is answered 503. */
    private static final long HUB_TIMEOUT_SECONDS = 10;
    /**
     * How long a response to a function call the store does not hold looks for it again: a run's
     * approval reaches clients when it is emitted and the store a commit later (on a loaded
     * cluster node, up to seconds), and whoever saw it may answer it at once, on any node.
     */
    private static final long STORE_LAG_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final long STORE_LAG_STEP_MS = 50;
    private static final int MAX_FN_CHARS = 256;
    private static final int MAX_SUBJECT_CHARS = 1_000;

    private final OperatorApprovals approvals;
    private final ConversationStore store;
    private final A2hHumans humans;
    private final LongSupplier clock;
    private final Object[] locks = new Object[64];

    A2hCalls(OperatorApprovals approvals, ConversationStore store, A2hHumans humans, LongSupplier clock) {
        this.approvals = approvals;
        this.store = store;
        this.humans = humans;
        this.clock = clock;
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new Object();
        }
    }

    // ---- create ----------------------------------------------------------------------------

    /**
     * {@code POST /function_calls} or {@code /contact_requests}: asks for the call once; the same
     * call posted again is answered with its current state, another one with its id gets 409.
     * A client's {@code status} is ignored.
     */
    RestResponse create(Kind kind, String text) {
        A2hInput in = new A2hInput();
        ObjectNode body = in.body(text);
        String runId = in.id(body, "run_id", "run_id");
        String callId = in.id(body, "call_id", "call_id");
        ObjectNode spec = in.object(body, "spec", "spec");
        ObjectNode checked = kind == Kind.FUNCTION_CALL ? functionSpec(spec, in) : contactSpec(spec, in);
        if (in.failed()) {
            return A2hService.error(in.error());
        }
        ObjectNode call = Json.object().put("run_id", runId).put("call_id", callId);
        call.set("spec", checked);
        synchronized (locks[Math.floorMod(callId.hashCode(), locks.length)]) {
            Optional<ObjectNode> existing = load(kind, callId);
            if (existing.isPresent()) {
                return again(kind, existing.get(), call);
            }
            String conversation = conversationFor(checked.get("channel"), runId, in);
            if (in.failed()) {
                return A2hService.error(in.error());
            }
            ApprovalRecord asked;
            try {
                asked = await(approvals.requestApproval(conversation, approvalRequest(kind, call)));
            } catch (HubUnavailable e) {
                return A2hService.error(e.error);
            }
            ObjectNode doc = Json.object();
            doc.set("call", call);
            doc.put("approval_id", asked.approvalId()).put("conversation_id", conversation)
                    .put("requested_at", clock.getAsLong());
            // The call before its index entry: a lister that finds the entry finds the call whole.
            if (!store.putDocument(kind.collection, callId, doc.toString(), false)) {
                // Another gateway on the same store took the id first.
                return again(kind, load(kind, callId).orElseThrow(), call);
            }
            store.putDocument(INDEX, asked.approvalId(), Json.object().put("kind", kind.name())
                    .put("call_id", callId).toString(), false);
            return RestResponse.json(201, view(kind, doc, Optional.of(asked)));
        }
    }

    /** The answer to a call posted with an id that is taken: its state when it is the same call. */
    private RestResponse again(Kind kind, ObjectNode stored, ObjectNode call) {
        if (!stored.get("call").equals(call)) {
            return A2hService.error(409, "call_id_in_use", "call_id " + call.get("call_id").textValue()
                    + " already names a different " + kind.noun + "; use a new call_id", "call_id");
        }
        return RestResponse.json(200, view(kind, stored));
    }

    /** A function call's spec, checked, without null fields; {@code kwargs} defaults to {}. */
    private static ObjectNode functionSpec(ObjectNode spec, A2hInput in) {
        in.text(spec, "fn", "spec.fn", MAX_FN_CHARS);
        ObjectNode kwargs = in.optionalObject(spec, "kwargs", "spec.kwargs");
        checkCommon(spec, "reject_options", in);
        if (in.failed()) {
            return null;
        }
        ObjectNode out = withoutNulls(spec);
        if (kwargs == null) {
            out.putObject("kwargs");
        }
        return out;
    }

    /** A contact request's spec, checked, without null fields. */
    private static ObjectNode contactSpec(ObjectNode spec, A2hInput in) {
        in.text(spec, "msg", "spec.msg", A2hInput.MAX_TEXT_CHARS);
        in.optionalText(spec, "subject", "spec.subject", MAX_SUBJECT_CHARS);
        checkCommon(spec, "response_options", in);
        return in.failed() ? null : withoutNulls(spec);
    }

    private static void checkCommon(ObjectNode spec, String optionsField, A2hInput in) {
        JsonNode channel = in.failed() ? null : spec.get("channel");
        if (channel != null && !channel.isNull()) {
            A2hChannels.check(channel, "spec.channel", true, in);
        }
        in.options(spec, optionsField, "spec." + optionsField);
        in.optionalObject(spec, "state", "spec.state");
    }

    private static ObjectNode withoutNulls(ObjectNode spec) {
        ObjectNode out = Json.object();
        spec.properties().forEach(e -> {
            if (!e.getValue().isNull()) {
                out.set(e.getKey(), e.getValue());
            }
        });
        return out;
    }

    /**
     * Where a call is asked: the conversation of its session channel, or of the first session of
     * the human it names. A call no session reaches waits in {@code a2h:<run_id>}, where only
     * {@code respond} (or a person who opens that conversation) answers it.
     */
    private String conversationFor(JsonNode channel, String runId, A2hInput in) {
        Optional<String> session = A2hChannels.session(channel);
        if (session.isPresent()) {
            return session.get();
        }
        Optional<String> humanId = A2hChannels.human(channel);
        if (humanId.isPresent()) {
            Optional<ObjectNode> human = humans.find(humanId.get());
            if (human.isEmpty()) {
                return in.invalid("spec.channel.human.human_id", "the id of an enrolled human (GET /humans); "
                        + humanId.get() + " is not one");
            }
            session = A2hHumans.session(human.get());
            if (session.isPresent()) {
                return session.get();
            }
        }
        return "a2h:" + runId;
    }

    private static ApprovalRequest approvalRequest(Kind kind, ObjectNode call) {
        String runId = call.get("run_id").textValue();
        String callId = call.get("call_id").textValue();
        JsonNode spec = call.get("spec");
        if (kind == Kind.FUNCTION_CALL) {
            String fn = spec.get("fn").textValue();
            return new ApprovalRequest(callId, fn, "An agent asks for approval to call " + fn, spec.get("kwargs"),
                    "Asked through A2H by agent run " + runId, RiskLevel.MEDIUM);
        }
        ObjectNode arguments = Json.object().put("msg", spec.get("msg").textValue());
        for (String f : List.of("subject", "response_options")) {
            if (spec.has(f)) {
                arguments.set(f, spec.get(f));
            }
        }
        String reasoning = spec.has("subject") ? spec.get("subject").textValue()
                : "An agent asks a question through A2H (run " + runId + "); the answer is your feedback";
        return new ApprovalRequest(callId, CONTACT_TOOL, spec.get("msg").textValue(), arguments, reasoning,
                RiskLevel.LOW);
    }

    // ---- read ------------------------------------------------------------------------------

    /** {@code GET /function_calls/{id}} or {@code /contact_requests/{id}}. */
    RestResponse get(Kind kind, String callId) {
        Optional<ObjectNode> doc = load(kind, callId);
        if (doc.isPresent()) {
            return RestResponse.json(200, view(kind, doc.get()));
        }
        Optional<ApprovalRecord> ofRun = kind == Kind.FUNCTION_CALL ? runApproval(callId) : Optional.empty();
        return ofRun.<RestResponse>map(a -> RestResponse.json(200, runView(a)))
                .orElseGet(() -> notFound(kind, callId));
    }

    /** {@code GET /agent/function_calls/pending} or {@code /agent/human_contacts/pending}, oldest first. */
    RestResponse pending(Kind kind, int limit, int offset) {
        List<ApprovalRecord> mine = new ArrayList<>();
        List<Optional<ObjectNode>> calls = new ArrayList<>();
        for (ApprovalRecord a : approvals.pendingApprovals(Integer.MAX_VALUE, 0)) {
            Optional<ObjectNode> index = store.document(INDEX, a.approvalId()).map(A2hInput::stored);
            Kind of = Kind.FUNCTION_CALL;
            Optional<ObjectNode> call = Optional.empty();
            if (index.isPresent()) {
                of = Kind.valueOf(index.get().get("kind").textValue());
                call = load(of, index.get().get("call_id").textValue());
            } else {
                // No entry yet: a call whose entry is being written (it is written after the call), else a run's.
                for (Kind k : Kind.values()) {
                    call = callOf(k, a);
                    if (call.isPresent()) {
                        of = k;
                        break;
                    }
                }
            }
            if (of == kind) {
                mine.add(a);
                calls.add(call);
            }
        }
        ObjectNode body = Json.object();
        ArrayNode items = body.putArray("items");
        for (int i = offset; i < mine.size() && i < (long) offset + limit; i++) {
            ApprovalRecord a = mine.get(i);
            // An index entry without its call (a store that lost the call) shows as a run's approval.
            items.add(calls.get(i).map(d -> view(kind, d, Optional.of(a))).orElseGet(() -> runView(a)));
        }
        body.put("total", mine.size()).put("limit", limit).put("offset", offset)
                .put("has_more", (long) offset + items.size() < mine.size());
        return RestResponse.json(200, body);
    }

    // ---- respond ---------------------------------------------------------------------------

    /**
     * {@code POST /agent/function_calls/{id}/respond} ({@code {approved, comment?,
     * reject_option_name?}}) or {@code /agent/human_contacts/{id}/respond} ({@code {response,
     * response_option_name?}}): decides the call's approval once; a later decision gets 409.
     */
    CompletionStage<RestResponse> respond(Kind kind, String callId, String text, Principal by) {
        A2hInput in = new A2hInput();
        ObjectNode body = in.body(text);
        boolean approved;
        String feedback;
        String option;
        if (kind == Kind.FUNCTION_CALL) {
            Boolean a = in.bool(body, "approved", "approved");
            approved = a != null && a;
            feedback = in.optionalText(body, "comment", "comment", A2hInput.MAX_TEXT_CHARS);
            option = in.optionalText(body, "reject_option_name", "reject_option_name", A2hInput.MAX_ID_CHARS);
        } else {
            approved = true;
            feedback = in.text(body, "response", "response", A2hInput.MAX_TEXT_CHARS);
            option = in.optionalText(body, "response_option_name", "response_option_name", A2hInput.MAX_ID_CHARS);
        }
        if (in.failed()) {
            return CompletableFuture.completedFuture(A2hService.error(in.error()));
        }
        Optional<ObjectNode> doc = load(kind, callId);
        String approvalId;
        if (doc.isPresent()) {
            approvalId = doc.get().get("approval_id").textValue();
            String optionsField = kind == Kind.FUNCTION_CALL ? "reject_options" : "response_options";
            checkOption(doc.get().at("/call/spec/" + optionsField), option,
                    kind == Kind.FUNCTION_CALL ? "reject_option_name" : "response_option_name", in);
            if (in.failed()) {
                return CompletableFuture.completedFuture(A2hService.error(in.error()));
            }
        } else if (kind == Kind.FUNCTION_CALL && runApproval(callId).isPresent()) {
            approvalId = callId;
        } else if (kind == Kind.FUNCTION_CALL) {
            // A run's approval is shown before it is stored: one seen a moment ago may be on its way.
            return awaitRunApproval(callId, System.nanoTime() + STORE_LAG_NANOS).thenCompose(found -> found
                    ? decide(kind, callId, doc, callId, approved, feedback, option, body, by)
                    : CompletableFuture.completedFuture(notFound(kind, callId)));
        } else {
            return CompletableFuture.completedFuture(notFound(kind, callId));
        }
        return decide(kind, callId, doc, approvalId, approved, feedback, option, body, by);
    }

    /**
     * Whether the store holds the run approval {@code approvalId}, looking again every
     * {@link #STORE_LAG_STEP_MS} ms until {@code deadline} ({@link System#nanoTime}), without
     * holding a thread meanwhile.
     */
    private CompletableFuture<Boolean> awaitRunApproval(String approvalId, long deadline) {
        return CompletableFuture.supplyAsync(() -> runApproval(approvalId).isPresent(),
                        CompletableFuture.delayedExecutor(STORE_LAG_STEP_MS, TimeUnit.MILLISECONDS))
                .thenCompose(found -> found || System.nanoTime() >= deadline
                        ? CompletableFuture.completedFuture(found)
                        : awaitRunApproval(approvalId, deadline));
    }

    /** Decides the call's approval; the answer waits for the decision to be stored, holding no thread meanwhile. */
    private CompletionStage<RestResponse> decide(Kind kind, String callId, Optional<ObjectNode> doc, String approvalId,
                                                 boolean approved, String feedback, String option, ObjectNode body,
                                                 Principal by) {
        String decided = approvalId;
        return approvals.decideAsOperator(approvalId, approved, feedback, body, by)
                .orTimeout(HUB_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                // Off the hub's thread, which completes the decision: the answer reads the store.
                .handleAsync((refused, failure) -> {
                    if (failure != null) {
                        return A2hService.error(GatewayError.of(ErrorCode.UNAVAILABLE,
                                "the gateway could not take the decision now; try again shortly"));
                    }
                    if (refused != null) {
                        return refused.code() == ErrorCode.CONFLICT
                                ? A2hService.error(409, ErrorCode.CONFLICT.wireCode(), "this " + kind.noun
                                        + " was already answered; the first answer stands", null)
                                : A2hService.error(refused);
                    }
                    if (doc.isEmpty()) {
                        return RestResponse.json(200, runView(store.approval(decided).orElseThrow()));
                    }
                    if (option != null) {
                        doc.get().put("option_name", option);
                        store.putDocument(kind.collection, callId, doc.get().toString(), true);
                    }
                    return RestResponse.json(200, view(kind, doc.get()));
                });
    }

    /** An option name must be one the call offered, when it offered any. */
    private static void checkOption(JsonNode offered, String option, String field, A2hInput in) {
        if (option == null || !offered.isArray() || offered.isEmpty()) {
            return;
        }
        List<String> names = new ArrayList<>();
        offered.forEach(o -> names.add(o.path("name").asText()));
        if (!names.contains(option)) {
            in.invalid(field, "one of the options the call offered: " + String.join(", ", names));
        }
    }

    // ---- views -----------------------------------------------------------------------------

    private ObjectNode view(Kind kind, ObjectNode doc) {
        return view(kind, doc, store.approval(doc.get("approval_id").textValue()));
    }

    /** A stored call as the SDK reads it, its status derived from the approval's decision. */
    private static ObjectNode view(Kind kind, ObjectNode doc, Optional<ApprovalRecord> approval) {
        ObjectNode out = doc.get("call").deepCopy();
        ObjectNode status = out.putObject("status").put("requested_at", iso(doc.get("requested_at").longValue()));
        ApprovalRecord a = approval.orElse(null);
        if (a == null || a.status() == ApprovalRecord.Status.PENDING) {
            return out;
        }
        String option = doc.path("option_name").isTextual() ? doc.get("option_name").textValue() : null;
        status.put("responded_at", iso(a.decidedAt()));
        if (kind == Kind.FUNCTION_CALL) {
            status.put("approved", a.status() == ApprovalRecord.Status.APPROVED);
            if (a.feedback() != null) {
                status.put("comment", a.feedback());
            }
            if (option != null) {
                status.put("reject_option_name", option);
            }
        } else {
            // A person who decides without a reply still answers: the decision is the response.
            boolean replied = a.feedback() != null && !a.feedback().isBlank();
            status.put("response", replied ? a.feedback()
                    : a.status() == ApprovalRecord.Status.APPROVED ? "approved" : "rejected");
            if (option != null) {
                status.put("response_option_name", option);
            }
        }
        status.putObject("user_info").put("id", a.decidedBy());
        return out;
    }

    /** A run's approval as a function call: {@code call_id} is the approval id, the channel its conversation. */
    private ObjectNode runView(ApprovalRecord a) {
        ObjectNode out = Json.object();
        if (a.runId() != null) {
            out.put("run_id", a.runId());
        }
        out.put("call_id", a.approvalId());
        ObjectNode spec = out.putObject("spec").put("fn", a.request().toolName());
        spec.set("kwargs", a.request().arguments());
        spec.putObject("channel").putObject(A2hChannels.SESSION).put("session_id", a.conversationId());
        spec.putObject("state").put("description", a.request().description())
                .put("reasoning", a.request().reasoning()).put("risk_level", a.request().risk().wireName())
                .put("tool_call_id", a.request().toolCallId());
        ObjectNode doc = Json.object();
        doc.set("call", out);
        doc.put("requested_at", requestedAt(a));
        return view(Kind.FUNCTION_CALL, doc, Optional.of(a));
    }

    /** When a run asked: the timestamp of its stored request event. */
    private long requestedAt(ApprovalRecord a) {
        List<Envelope> e = store.events(a.conversationId(), a.seq() - 1, 1);
        return !e.isEmpty() && e.get(0).seq() == a.seq() ? e.get(0).timestamp() : clock.getAsLong();
    }

    /** An approval of the hub that no A2H call asked for. */
    private Optional<ApprovalRecord> runApproval(String approvalId) {
        if (store.document(INDEX, approvalId).isPresent()) {
            return Optional.empty();
        }
        return store.approval(approvalId);
    }

    /** The stored call of {@code kind} that asked for the approval: its id is the approval's tool call id. */
    private Optional<ObjectNode> callOf(Kind kind, ApprovalRecord a) {
        return load(kind, a.request().toolCallId())
                .filter(doc -> a.approvalId().equals(doc.path("approval_id").textValue()));
    }

    private Optional<ObjectNode> load(Kind kind, String callId) {
        return store.document(kind.collection, callId).map(A2hInput::stored);
    }

    private static RestResponse notFound(Kind kind, String callId) {
        return A2hService.error(GatewayError.of(ErrorCode.NOT_FOUND, "no " + kind.noun + " " + callId));
    }

    private static String iso(long millis) {
        return DateTimeFormatter.ISO_INSTANT.format(Instant.ofEpochMilli(millis));
    }

    /** The hub did not answer: it is stopping or overloaded. */
    private static final class HubUnavailable extends Exception {
        private static final long serialVersionUID = 1L;
        final transient GatewayError error;

        HubUnavailable(String message) {
            super(message, null, false, false);
            this.error = GatewayError.of(ErrorCode.UNAVAILABLE, message);
        }
    }

    private static <T> T await(CompletableFuture<T> f) throws HubUnavailable {
        try {
            return f.get(HUB_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HubUnavailable("the gateway is stopping; try again shortly");
        } catch (ExecutionException | TimeoutException e) {
            throw new HubUnavailable("the gateway could not take the request now; try again shortly");
        }
    }
}
