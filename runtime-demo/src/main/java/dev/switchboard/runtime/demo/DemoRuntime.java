package dev.switchboard.runtime.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.Citation;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.LogContext;
import dev.switchboard.core.Plural;
import dev.switchboard.core.RiskLevel;
import dev.switchboard.core.Role;
import dev.switchboard.core.spi.AgentRuntime;
import dev.switchboard.core.spi.ApprovalDecision;
import dev.switchboard.core.spi.ApprovalRecord;
import dev.switchboard.core.spi.ApprovalRequest;
import dev.switchboard.core.spi.RunContext;
import dev.switchboard.core.spi.RunHandle;
import dev.switchboard.core.spi.RunRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The embedded demo agent: deterministic, offline, and able to show every flow of every
 * dialect. What it does depends on the newest user message (case-insensitive):
 * {@code benchmark <n>} and {@code history} (the whole message), {@code crash},
 * {@code broken tool}, {@code report}, {@code search}, {@code slow} (contained, checked in that
 * order), else a plain answer.
 */
public final class DemoRuntime implements AgentRuntime {
    private static final Logger log = LoggerFactory.getLogger(DemoRuntime.class);

    static final Citation REGULATION = new Citation("cite_1", "regulation",
            "Regulation (EC) No 852/2004 on the hygiene of foodstuffs",
            "https://eur-lex.europa.eu/eli/reg/2004/852/oj", 12);
    static final Citation GUIDANCE = new Citation("cite_2", "guidance",
            "Safer food, better business for caterers",
            "https://www.food.gov.uk/business-guidance/safer-food-better-business", null);

    private static final String REPORT_TOOL = "generate_inspection_report";

    /** {@code benchmark <n>}: the load generator's workload, one message of n chunks. */
    private static final Pattern BENCHMARK = Pattern.compile("benchmark\\s+(\\d+)");
    /** The most chunks one {@code benchmark} run streams. */
    static final int MAX_BENCHMARK_CHUNKS = 100_000;
    /** The text of every chunk of a {@code benchmark} run. */
    static final String BENCHMARK_CHUNK = "token ";
    /** The last {@code benchmark} answer's whole text (see benchmarkAnswer). */
    private static volatile BenchmarkAnswer lastBenchmarkAnswer;
    /**
     * Steps a run plays on the thread that starts it before the scheduler plays on: a short run
     * (the load generator's 104 chunks) whole, a long one no longer than about a millisecond there.
     */
    static final int STEPS_ON_CALLER = 256;

    private final long chunkDelayMs;
    private final ScheduledExecutorService scheduler;

    /** A demo agent that pauses {@code chunkDelayMs} between streamed chunks (0 = none). */
    public DemoRuntime(long chunkDelayMs) {
        if (chunkDelayMs < 0) {
            throw new IllegalArgumentException("chunkDelayMs must be >= 0, got " + chunkDelayMs);
        }
        this.chunkDelayMs = chunkDelayMs;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchboard-demo");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String id() {
        return "demo";
    }

    @Override
    public RunHandle start(RunRequest request, RunContext ctx) {
        String text = newestUserText(request.messages());
        DemoRun run = new DemoRun(request, ctx);
        return run.play(() -> script(run, text));
    }

    /** Every script but {@code history}'s, which reads the conversation's history from the store. */
    @Override
    public boolean startsWithoutWaiting(List<InputMessage> newMessages) {
        return !readsHistory(newestUserText(newMessages));
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }

    private static boolean readsHistory(String message) {
        return message.toLowerCase(Locale.ROOT).strip().equals("history");
    }

    private static String newestUserText(List<InputMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (messages.get(i).role() == Role.USER) {
                return messages.get(i).content();
            }
        }
        return "";
    }

    /** Fills the run's steps for this message. */
    private void script(DemoRun run, String message) {
        String m = message.toLowerCase(Locale.ROOT).strip();
        Matcher benchmark = BENCHMARK.matcher(m);
        if (benchmark.matches()) {
            String digits = benchmark.group(1);
            benchmark(run, digits.length() > 9 ? -1 : Integer.parseInt(digits));
        } else if (readsHistory(m)) {
            long earlier = run.ctx.history().stream().filter(x -> x.role() == Role.USER).count();
            run.step("thinking");
            run.say(chunks("This conversation has " + Plural.of(earlier, "earlier message") + " from you. ",
                    "Ask me anything about food safety ", "and I will continue from there."), List.of());
            run.finish();
        } else if (m.contains("crash")) {
            run.step("thinking");
            run.say(chunks("Let me look into ", "that for you"), List.of());
            run.fail(ErrorCode.INTERNAL, "the demo agent crashed while answering (the message asked it to)");
        } else if (m.contains("broken tool")) {
            run.open("executing_tools");
            ObjectNode args = Json.object().put("establishment_id", "EST-404");
            String callId = Ids.next("call");
            run.toolCall(callId, "lookup_inspection_records", args);
            run.emit(new Event.ToolResult(callId, "lookup_inspection_records", args, false,
                    "Database connection timeout", Ids.next("msg")));
            run.close("executing_tools");
            run.say(chunks("The tool lookup_inspection_records failed ", "(Database connection timeout), ",
                    "so I could not check the inspection records. ", "Please try again later."), List.of());
            run.finish();
        } else if (m.contains("report")) {
            run.step("thinking");
            String callId = Ids.next("call");
            ObjectNode args = Json.object().put("inspection_id", "INS-2024-001");
            run.approval(new ApprovalRequest(callId, REPORT_TOOL,
                            "Generates official PDF inspection report that will be stored permanently", args,
                            "User requested to finalize the inspection report", RiskLevel.HIGH),
                    decision -> reportOutcome(run, callId, args, decision.approved(), decision.feedback()));
        } else if (m.contains("search")) {
            run.open("routing");
            run.pause();
            run.close("routing");
            run.open("executing_tools");
            String callId = Ids.next("call");
            ObjectNode args = Json.object().put("query", message);
            run.toolCall(callId, "search_regulations", args);
            run.pause();
            run.emit(new Event.ToolResult(callId, "search_regulations", args, true,
                    "Found 5 relevant regulations", Ids.next("msg")));
            run.close("executing_tools");
            run.say(chunks("I found 5 relevant regulations. ", "The most important is Regulation (EC) No 852/2004, ",
                    "which requires hazard analysis and temperature control ", "for every food business."),
                    List.of(REGULATION, GUIDANCE));
            run.finish();
        } else if (m.contains("slow")) {
            run.step("thinking");
            List<String> parts = new ArrayList<>(50);
            for (int i = 1; i <= 50; i++) {
                parts.add("chunk " + i + (i < 50 ? " " : "."));
            }
            run.say(parts, List.of(GUIDANCE), 100);
            run.finish();
        } else {
            run.step("thinking");
            run.say(chunks("Based on the food hygiene regulations, ", "restaurants must keep chilled food at 8 °C or below, ",
                    "store raw and ready-to-eat foods apart, ", "and record temperature checks every day."),
                    List.of(REGULATION));
            run.finish();
        }
    }

    /**
     * One assistant message of {@code n} identical chunks and nothing else (no step, no
     * citation), paced only by the chunk delay: the load generator's workload.
     */
    private static void benchmark(DemoRun run, int n) {
        if (n < 1 || n > MAX_BENCHMARK_CHUNKS) {
            run.say(List.of("benchmark takes a number of chunks from 1 to " + MAX_BENCHMARK_CHUNKS + "."), List.of());
        } else {
            run.say(Collections.nCopies(n, BENCHMARK_CHUNK), benchmarkAnswer(n), List.of());
        }
        run.finish();
    }

    /**
     * The whole text of a {@code benchmark} answer of {@code n} chunks, made once for the length
     * the load generator keeps asking for rather than joined again run after run.
     */
    private static String benchmarkAnswer(int n) {
        BenchmarkAnswer a = lastBenchmarkAnswer;
        if (a == null || a.chunks() != n) {
            a = new BenchmarkAnswer(n, BENCHMARK_CHUNK.repeat(n));
            lastBenchmarkAnswer = a;
        }
        return a.text();
    }

    /** A {@code benchmark} answer's length in chunks and its whole text. */
    private record BenchmarkAnswer(int chunks, String text) {
    }

    /** What follows the report approval: the tool and an answer, or an answer without it. */
    private static void reportOutcome(DemoRun run, String callId, JsonNode args, boolean approved, String feedback) {
        if (approved) {
            run.open("executing_tools");
            run.toolCall(callId, REPORT_TOOL, args);
            run.pause();
            run.emit(new Event.ToolResult(callId, REPORT_TOOL, args, true,
                    "Report INS-2024-001 generated and stored as RPT-INS-2024-001.pdf", Ids.next("msg")));
            run.close("executing_tools");
            run.say(chunks("The inspection report INS-2024-001 ", "was generated ",
                    "and stored permanently as RPT-INS-2024-001.pdf."), List.of(REGULATION));
        } else {
            String why = feedback == null || feedback.isBlank() ? "" : " Your feedback: " + feedback.strip();
            run.say(chunks("The inspection report was not generated, ", "because the request was rejected.", why),
                    List.of());
        }
        run.finish();
    }

    /**
     * Continues a report run whose approval was decided after a restart: the same outcome as
     * if the gateway had not stopped.
     */
    @Override
    public RunHandle resume(RunRequest request, List<ApprovalRecord> decided, RunContext ctx) {
        DemoRun run = new DemoRun(request, ctx);
        return run.play(() -> {
            for (ApprovalRecord a : decided) {
                Event.ApprovalRequested req = a.request();
                if (!req.toolName().equals(REPORT_TOOL)) {
                    ctx.fail(ErrorCode.INTERNAL, "the demo agent never asks to approve " + req.toolName());
                    return;
                }
                reportOutcome(run, req.toolCallId(), req.arguments(), a.status() == ApprovalRecord.Status.APPROVED,
                        a.feedback());
            }
        });
    }

    private static List<String> chunks(String... parts) {
        List<String> out = new ArrayList<>(parts.length);
        for (String p : parts) {
            if (!p.isEmpty()) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * A queue of steps, played first by the thread that starts the run and then by the scheduler
     * (see {@link #play}); pauses and approvals suspend it. Each step is an
     * {@link Event} to emit (most are) or a {@link Runnable}; an event is queued as itself rather
     * than in a closure, since a run queues its whole script before it plays it.
     */
    private final class DemoRun implements RunHandle {
        private final RunRequest request;
        private final RunContext ctx;
        /** The steps in order; those before {@link #next} are played (and let go). */
        private final ArrayList<Object> steps = new ArrayList<>();
        private int next;
        private volatile boolean cancelled;
        private boolean suspended;

        DemoRun(RunRequest request, RunContext ctx) {
            this.request = request;
            this.ctx = ctx;
        }

        void emit(Event e) {
            steps.add(e);
        }

        /** Makes room for {@code more} steps at once: a long answer is queued without regrowing the list. */
        private void expect(int more) {
            steps.ensureCapacity(steps.size() + more);
        }

        /** The next step to play, or null when none is queued. */
        private Object poll() {
            if (next == steps.size()) {
                return null;
            }
            Object step = steps.set(next++, null);
            if (next == steps.size()) {
                steps.clear();
                next = 0;
            }
            return step;
        }

        /** Queues a step that is not an event to emit. */
        private void queue(Runnable step) {
            steps.add(step);
        }

        void open(String step) {
            emit(new Event.StepStarted(step));
        }

        void close(String step) {
            emit(new Event.StepFinished(step));
        }

        void step(String step) {
            open(step);
            pause();
            close(step);
        }

        void pause() {
            pause(chunkDelayMs);
        }

        void pause(long ms) {
            if (ms > 0) {
                queue(() -> {
                    suspended = true;
                    scheduler.schedule(this::resume, ms, TimeUnit.MILLISECONDS);
                });
            }
        }

        void toolCall(String callId, String name, JsonNode args) {
            emit(new Event.ToolCallStarted(callId, name, null));
            emit(new Event.ToolCallArgs(callId, args.toString()));
            emit(new Event.ToolCallCompleted(callId, name, args));
        }

        void say(List<String> parts, List<Citation> citations) {
            say(parts, citations, chunkDelayMs);
        }

        void say(List<String> parts, List<Citation> citations, long delayMs) {
            say(parts, joined(parts), citations, delayMs);
        }

        /** The parts, whose whole {@code text} the caller has. */
        void say(List<String> parts, String text, List<Citation> citations) {
            say(parts, text, citations, chunkDelayMs);
        }

        private void say(List<String> parts, String text, List<Citation> citations, long delayMs) {
            String id = Ids.next("msg");
            // Its parts (with a pause before each but the first), its start and end, and what follows it
            // (most answers end their run).
            expect(parts.size() * (delayMs > 0 ? 2 : 1) + 3);
            emit(new Event.MessageStarted(id, Role.ASSISTANT));
            // An event is immutable: chunks of the same text in a row (a benchmark answer's) share one.
            Event.TextDelta delta = null;
            for (int i = 0; i < parts.size(); i++) {
                if (i > 0) {
                    pause(delayMs);
                }
                String part = parts.get(i);
                if (delta == null || !delta.delta().equals(part)) {
                    delta = new Event.TextDelta(id, part);
                }
                emit(delta);
            }
            emit(new Event.MessageCompleted(id, text, citations));
        }

        /** The parts as one text, made at its length (String.join copies a list into a growing array first). */
        private static String joined(List<String> parts) {
            int length = 0;
            for (String part : parts) {
                length += part.length();
            }
            StringBuilder text = new StringBuilder(length);
            for (String part : parts) {
                text.append(part);
            }
            return text.toString();
        }

        void approval(ApprovalRequest request, java.util.function.Consumer<ApprovalDecision> then) {
            queue(() -> {
                suspended = true;
                ctx.requestApproval(request).whenComplete((decision, error) -> scheduler.execute(() -> {
                    if (error == null) {
                        then.accept(decision);
                        resume();
                    }
                }));
            });
        }

        void finish() {
            queue(ctx::finish);
        }

        void fail(ErrorCode code, String message) {
            queue(() -> ctx.fail(code, message));
        }

        /**
         * Fills the run's steps with {@code script} and plays them on the calling thread (the hub's
         * worker that starts the run) until one suspends the run or {@link #STEPS_ON_CALLER} are
         * played; the scheduler plays on from there. A run that pauses nowhere (no chunk delay) and
         * is short is over before {@code start} returns, without a hand-over between threads.
         */
        RunHandle play(Runnable script) {
            try {
                script.run();
                if (advance(STEPS_ON_CALLER)) {
                    scheduler.execute(this::resume);
                }
            } catch (RuntimeException e) {
                log.error("demo run {} failed", request.runId(), e);
                ctx.fail(ErrorCode.INTERNAL, "the demo agent failed");
            }
            return this;
        }

        /**
         * Plays at most {@code limit} steps, stopping early where one suspends the run; true when
         * steps remain to be played now (the limit was reached).
         */
        boolean advance(int limit) {
            suspended = false;
            for (int played = 0; !suspended && !cancelled && !ctx.isDone(); played++) {
                if (played == limit) {
                    return next < steps.size();
                }
                Object step = poll();
                if (step == null) {
                    return false;
                }
                if (step instanceof Event e) {
                    ctx.emit(e);
                } else {
                    ((Runnable) step).run();
                }
            }
            return false;
        }

        /** Plays on after a pause or a decision, with the run's ids in the log context. */
        private void resume() {
            try (LogContext.Scope ids = LogContext.open(request)) {
                try {
                    advance(Integer.MAX_VALUE);
                } catch (RuntimeException e) {
                    log.error("demo run {} failed", request.runId(), e);
                    ctx.fail(ErrorCode.INTERNAL, "the demo agent failed");
                }
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }
}
