package dev.switchboard.core;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.Arrays;
import java.util.List;

/**
 * The gateway's own JSON form of an {@link Event}, used to keep events in a store.
 *
 * <p>Events are written with the streaming generator, field by field, in the form databind gives
 * the {@link Event} records (the {@code type} id of {@code @JsonSubTypes} first, then the record
 * components in order, null ones as {@code null}, {@link Role} and {@link RiskLevel} by wire name,
 * {@link ErrorCode} by constant name, a {@link Citation}'s null {@code page} left out), so rows
 * written by either are read back by the same databind reader.
 */
public final class EventCodec {
    private static final ThreadLocal<ThreadWriter> THREAD_WRITER = ThreadLocal.withInitial(ThreadWriter::new);
    private static final ObjectReader READER = Json.STORED_MAPPER.readerFor(Event.class);
    /* Not JsonGenerator.writeTree, which flushes the generator after every tree. */
    private static final ObjectWriter TREE_WRITER =
            Json.MAPPER.writer().without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);

    private static final SerializableString TYPE = name("type");
    private static final SerializableString RUN_STARTED_TYPE = name("run_started");
    private static final SerializableString STEP_STARTED_TYPE = name("step_started");
    private static final SerializableString STEP_FINISHED_TYPE = name("step_finished");
    private static final SerializableString MESSAGE_STARTED_TYPE = name("message_started");
    private static final SerializableString TEXT_DELTA_TYPE = name("text_delta");
    private static final SerializableString MESSAGE_COMPLETED_TYPE = name("message_completed");
    private static final SerializableString REASONING_STARTED_TYPE = name("reasoning_started");
    private static final SerializableString REASONING_DELTA_TYPE = name("reasoning_delta");
    private static final SerializableString REASONING_COMPLETED_TYPE = name("reasoning_completed");
    private static final SerializableString TOOL_CALL_STARTED_TYPE = name("tool_call_started");
    private static final SerializableString TOOL_CALL_ARGS_TYPE = name("tool_call_args");
    private static final SerializableString TOOL_CALL_COMPLETED_TYPE = name("tool_call_completed");
    private static final SerializableString TOOL_RESULT_TYPE = name("tool_result");
    private static final SerializableString APPROVAL_REQUESTED_TYPE = name("approval_requested");
    private static final SerializableString APPROVAL_RESOLVED_TYPE = name("approval_resolved");
    private static final SerializableString STATE_SNAPSHOT_TYPE = name("state_snapshot");
    private static final SerializableString STATE_DELTA_TYPE = name("state_delta");
    private static final SerializableString CUSTOM_TYPE = name("custom");
    private static final SerializableString USAGE_TYPE = name("usage");
    private static final SerializableString RUN_FINISHED_TYPE = name("run_finished");
    private static final SerializableString RUN_FAILED_TYPE = name("run_failed");

    private static final SerializableString PARENT_RUN_ID = name("parentRunId");
    private static final SerializableString STEP_NAME = name("stepName");
    private static final SerializableString MESSAGE_ID = name("messageId");
    private static final SerializableString ROLE = name("role");
    private static final SerializableString DELTA = name("delta");
    private static final SerializableString TEXT = name("text");
    private static final SerializableString CITATIONS = name("citations");
    private static final SerializableString TOOL_CALL_ID = name("toolCallId");
    private static final SerializableString TOOL_NAME = name("toolName");
    private static final SerializableString PARENT_MESSAGE_ID = name("parentMessageId");
    private static final SerializableString ARGUMENTS = name("arguments");
    private static final SerializableString OK = name("ok");
    private static final SerializableString CONTENT = name("content");
    private static final SerializableString APPROVAL_ID = name("approvalId");
    private static final SerializableString DESCRIPTION = name("description");
    private static final SerializableString REASONING = name("reasoning");
    private static final SerializableString RISK = name("risk");
    private static final SerializableString APPROVED = name("approved");
    private static final SerializableString FEEDBACK = name("feedback");
    private static final SerializableString DECIDED_BY = name("decidedBy");
    private static final SerializableString STATE = name("state");
    private static final SerializableString PATCH = name("patch");
    private static final SerializableString NAME = name("name");
    private static final SerializableString VALUE = name("value");
    private static final SerializableString MODEL = name("model");
    private static final SerializableString INPUT_TOKENS = name("inputTokens");
    private static final SerializableString OUTPUT_TOKENS = name("outputTokens");
    private static final SerializableString REASONING_TOKENS = name("reasoningTokens");
    private static final SerializableString CACHED_INPUT_TOKENS = name("cachedInputTokens");
    private static final SerializableString CODE = name("code");
    private static final SerializableString MESSAGE = name("message");

    private static final SerializableString ID = name("id");
    private static final SerializableString SOURCE_TYPE = name("sourceType");
    private static final SerializableString TITLE = name("title");
    private static final SerializableString URL = name("url");
    private static final SerializableString PAGE = name("page");

    private EventCodec() {
    }

    private static SerializableString name(String text) {
        return new SerializedString(text);
    }

    /** The event as one JSON document with a {@code type} discriminator. */
    public static String toJson(Event event) {
        ThreadWriter out = THREAD_WRITER.get();
        boolean written = false;
        try {
            write(event, out.generator);
            String json = out.take();
            written = true;
            return json;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serialise " + event.kind(), e);
        } finally {
            if (!written) {
                // The generator may be left inside the event's object: the next event gets a new one.
                THREAD_WRITER.remove();
            }
        }
    }

    /** Writes the event as one JSON object, the form of {@link #toJson}, into {@code g}. */
    public static void write(Event event, JsonGenerator g) throws IOException {
        g.writeStartObject();
        g.writeFieldName(TYPE);
        // A switch expression (its value is not needed), so that a new kind does not compile until it is written here.
        Event.Kind writtenKind = switch (event.kind()) {
            case RUN_STARTED -> {
                g.writeString(RUN_STARTED_TYPE);
                string(g, PARENT_RUN_ID, ((Event.RunStarted) event).parentRunId());
                yield Event.Kind.RUN_STARTED;
            }
            case STEP_STARTED -> {
                g.writeString(STEP_STARTED_TYPE);
                string(g, STEP_NAME, ((Event.StepStarted) event).stepName());
                yield Event.Kind.STEP_STARTED;
            }
            case STEP_FINISHED -> {
                g.writeString(STEP_FINISHED_TYPE);
                string(g, STEP_NAME, ((Event.StepFinished) event).stepName());
                yield Event.Kind.STEP_FINISHED;
            }
            case MESSAGE_STARTED -> {
                Event.MessageStarted e = (Event.MessageStarted) event;
                g.writeString(MESSAGE_STARTED_TYPE);
                string(g, MESSAGE_ID, e.messageId());
                string(g, ROLE, e.role().wireName());
                yield Event.Kind.MESSAGE_STARTED;
            }
            case TEXT_DELTA -> {
                Event.TextDelta e = (Event.TextDelta) event;
                g.writeString(TEXT_DELTA_TYPE);
                string(g, MESSAGE_ID, e.messageId());
                string(g, DELTA, e.delta());
                yield Event.Kind.TEXT_DELTA;
            }
            case MESSAGE_COMPLETED -> {
                Event.MessageCompleted e = (Event.MessageCompleted) event;
                g.writeString(MESSAGE_COMPLETED_TYPE);
                string(g, MESSAGE_ID, e.messageId());
                string(g, TEXT, e.text());
                g.writeFieldName(CITATIONS);
                citations(g, e.citations());
                yield Event.Kind.MESSAGE_COMPLETED;
            }
            case REASONING_STARTED -> {
                g.writeString(REASONING_STARTED_TYPE);
                string(g, MESSAGE_ID, ((Event.ReasoningStarted) event).messageId());
                yield Event.Kind.REASONING_STARTED;
            }
            case REASONING_DELTA -> {
                Event.ReasoningDelta e = (Event.ReasoningDelta) event;
                g.writeString(REASONING_DELTA_TYPE);
                string(g, MESSAGE_ID, e.messageId());
                string(g, DELTA, e.delta());
                yield Event.Kind.REASONING_DELTA;
            }
            case REASONING_COMPLETED -> {
                Event.ReasoningCompleted e = (Event.ReasoningCompleted) event;
                g.writeString(REASONING_COMPLETED_TYPE);
                string(g, MESSAGE_ID, e.messageId());
                string(g, TEXT, e.text());
                yield Event.Kind.REASONING_COMPLETED;
            }
            case TOOL_CALL_STARTED -> {
                Event.ToolCallStarted e = (Event.ToolCallStarted) event;
                g.writeString(TOOL_CALL_STARTED_TYPE);
                string(g, TOOL_CALL_ID, e.toolCallId());
                string(g, TOOL_NAME, e.toolName());
                string(g, PARENT_MESSAGE_ID, e.parentMessageId());
                yield Event.Kind.TOOL_CALL_STARTED;
            }
            case TOOL_CALL_ARGS -> {
                Event.ToolCallArgs e = (Event.ToolCallArgs) event;
                g.writeString(TOOL_CALL_ARGS_TYPE);
                string(g, TOOL_CALL_ID, e.toolCallId());
                string(g, DELTA, e.delta());
                yield Event.Kind.TOOL_CALL_ARGS;
            }
            case TOOL_CALL_COMPLETED -> {
                Event.ToolCallCompleted e = (Event.ToolCallCompleted) event;
                g.writeString(TOOL_CALL_COMPLETED_TYPE);
                string(g, TOOL_CALL_ID, e.toolCallId());
                string(g, TOOL_NAME, e.toolName());
                tree(g, ARGUMENTS, e.arguments());
                yield Event.Kind.TOOL_CALL_COMPLETED;
            }
            case TOOL_RESULT -> {
                Event.ToolResult e = (Event.ToolResult) event;
                g.writeString(TOOL_RESULT_TYPE);
                string(g, TOOL_CALL_ID, e.toolCallId());
                string(g, TOOL_NAME, e.toolName());
                tree(g, ARGUMENTS, e.arguments());
                g.writeFieldName(OK);
                g.writeBoolean(e.ok());
                string(g, CONTENT, e.content());
                string(g, MESSAGE_ID, e.messageId());
                yield Event.Kind.TOOL_RESULT;
            }
            case APPROVAL_REQUESTED -> {
                Event.ApprovalRequested e = (Event.ApprovalRequested) event;
                g.writeString(APPROVAL_REQUESTED_TYPE);
                string(g, APPROVAL_ID, e.approvalId());
                string(g, TOOL_CALL_ID, e.toolCallId());
                string(g, TOOL_NAME, e.toolName());
                string(g, DESCRIPTION, e.description());
                tree(g, ARGUMENTS, e.arguments());
                string(g, REASONING, e.reasoning());
                string(g, RISK, e.risk().wireName());
                yield Event.Kind.APPROVAL_REQUESTED;
            }
            case APPROVAL_RESOLVED -> {
                Event.ApprovalResolved e = (Event.ApprovalResolved) event;
                g.writeString(APPROVAL_RESOLVED_TYPE);
                string(g, APPROVAL_ID, e.approvalId());
                g.writeFieldName(APPROVED);
                g.writeBoolean(e.approved());
                string(g, FEEDBACK, e.feedback());
                string(g, DECIDED_BY, e.decidedBy());
                yield Event.Kind.APPROVAL_RESOLVED;
            }
            case STATE_SNAPSHOT -> {
                g.writeString(STATE_SNAPSHOT_TYPE);
                tree(g, STATE, ((Event.StateSnapshot) event).state());
                yield Event.Kind.STATE_SNAPSHOT;
            }
            case STATE_DELTA -> {
                g.writeString(STATE_DELTA_TYPE);
                tree(g, PATCH, ((Event.StateDelta) event).patch());
                yield Event.Kind.STATE_DELTA;
            }
            case CUSTOM -> {
                Event.Custom e = (Event.Custom) event;
                g.writeString(CUSTOM_TYPE);
                string(g, NAME, e.name());
                tree(g, VALUE, e.value());
                yield Event.Kind.CUSTOM;
            }
            case USAGE -> {
                Event.Usage e = (Event.Usage) event;
                g.writeString(USAGE_TYPE);
                string(g, MODEL, e.model());
                g.writeFieldName(INPUT_TOKENS);
                g.writeNumber(e.inputTokens());
                g.writeFieldName(OUTPUT_TOKENS);
                g.writeNumber(e.outputTokens());
                number(g, REASONING_TOKENS, e.reasoningTokens());
                number(g, CACHED_INPUT_TOKENS, e.cachedInputTokens());
                yield Event.Kind.USAGE;
            }
            case RUN_FINISHED -> {
                g.writeString(RUN_FINISHED_TYPE);
                yield Event.Kind.RUN_FINISHED;
            }
            case RUN_FAILED -> {
                Event.RunFailed e = (Event.RunFailed) event;
                g.writeString(RUN_FAILED_TYPE);
                string(g, CODE, e.code().name());
                string(g, MESSAGE, e.message());
                yield Event.Kind.RUN_FAILED;
            }
        };
        g.writeEndObject();
    }

    /** A string property; null is written as {@code null}. */
    private static void string(JsonGenerator g, SerializableString name, String value) throws IOException {
        g.writeFieldName(name);
        g.writeString(value);
    }

    private static void number(JsonGenerator g, SerializableString name, Long value) throws IOException {
        g.writeFieldName(name);
        if (value == null) {
            g.writeNull();
        } else {
            g.writeNumber(value.longValue());
        }
    }

    private static void tree(JsonGenerator g, SerializableString name, JsonNode value) throws IOException {
        g.writeFieldName(name);
        TREE_WRITER.writeValue(g, value);
    }

    /** Citations as {@link Citation}'s {@code @JsonInclude(NON_NULL)} has them: no {@code page} when null. */
    private static void citations(JsonGenerator g, List<Citation> citations) throws IOException {
        g.writeStartArray(citations, citations.size());
        for (Citation c : citations) {
            g.writeStartObject();
            string(g, ID, c.id());
            string(g, SOURCE_TYPE, c.sourceType());
            string(g, TITLE, c.title());
            string(g, URL, c.url());
            if (c.page() != null) {
                g.writeFieldName(PAGE);
                g.writeNumber(c.page().intValue());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /**
     * A generator kept open for every event its thread writes, over a growing buffer of its own, so
     * that an event costs the {@code String} and nothing else. It has a buffer recycler of its own
     * too: one from the thread's shared pool would keep that pool's buffer from every other
     * generator on the thread.
     */
    private static final class ThreadWriter extends Writer implements BufferRecycler.Gettable {
        /** A buffer grown past this many chars by a large event is let go after it. */
        private static final int KEPT_CHARS = 16 * 1024;
        private static final int INITIAL_CHARS = 512;

        private final BufferRecycler recycler = new BufferRecycler();
        private final JsonGenerator generator;
        private char[] chars = new char[INITIAL_CHARS];
        private int length;

        ThreadWriter() {
            try {
                generator = Json.FACTORY.createGenerator(this);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            generator.setRootValueSeparator(null);
        }

        /** The text written since the last call. */
        String take() throws IOException {
            generator.flush();
            String text = new String(chars, 0, length);
            length = 0;
            if (chars.length > KEPT_CHARS) {
                chars = new char[INITIAL_CHARS];
            }
            return text;
        }

        @Override
        public BufferRecycler bufferRecycler() {
            return recycler;
        }

        @Override
        public void write(char[] source, int offset, int count) {
            ensure(count);
            System.arraycopy(source, offset, chars, length, count);
            length += count;
        }

        @Override
        public void write(String source, int offset, int count) {
            ensure(count);
            source.getChars(offset, offset + count, chars, length);
            length += count;
        }

        @Override
        public void write(int c) {
            ensure(1);
            chars[length++] = (char) c;
        }

        private void ensure(int more) {
            if (chars.length - length < more) {
                chars = Arrays.copyOf(chars, Math.max(chars.length * 2, length + more));
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }

    /** The event read back from {@link #toJson}. */
    public static Event fromJson(String json) {
        try {
            return READER.readValue(json);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("stored event is unreadable: " + e.getOriginalMessage(), e);
        }
    }
}
