package dev.switchboard.runtime.openai;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Event;
import dev.switchboard.core.Ids;
import dev.switchboard.core.InputMessage;
import dev.switchboard.core.Json;
import dev.switchboard.core.Role;
import dev.switchboard.core.ToolCallRef;
import dev.switchboard.core.UpstreamHttp;
import dev.switchboard.core.spi.RunContext;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One streamed model call: reads the {@code chat.completion.chunk}s of the stream and emits what they
 * say as it arrives. Content deltas are a text message, {@code reasoning_content} (or
 * {@code reasoning}) deltas a reasoning message, and {@code tool_calls} fragments, joined by their
 * {@code index}, tool calls whose arguments stream as they come. Completion events follow at the end
 * of the stream, when the arguments are known to be whole.
 */
final class OpenAiTurn {
    /** Bad upstream input; its message says what was wrong, for the run's failure. */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** A tool call as its fragments arrive. */
    static final class Call {
        String id;
        String name;
        boolean started;
        final StringBuilder arguments = new StringBuilder();
        JsonNode parsed;

        /** A whole call, as an approval record keeps it. */
        static Call of(String id, String name, JsonNode arguments) {
            Call c = new Call();
            c.id = id;
            c.name = name;
            c.started = true;
            c.arguments.append(arguments.toString());
            c.parsed = arguments;
            return c;
        }

        String id() {
            return id;
        }

        String name() {
            return name;
        }

        String argumentsText() {
            return arguments.toString();
        }

        /** The arguments as a JSON object, or null when the model wrote something else. */
        JsonNode parsedArguments() {
            return parsed;
        }
    }

    private final RunContext ctx;
    private final String configuredModel;
    private final ChunkParser parser = new ChunkParser();
    private String model;
    private String messageId;
    private final StringBuilder text = new StringBuilder();
    private String reasoningId;
    private final StringBuilder reasoning = new StringBuilder();
    private boolean reasoningOpen;
    private final Map<Integer, Call> calls = new TreeMap<>();
    private String finishReason;
    private JsonNode usage;

    OpenAiTurn(RunContext ctx, String configuredModel) {
        this.ctx = ctx;
        this.configuredModel = configuredModel;
    }

    /**
     * Takes the data of one event of the stream, other than {@code [DONE]}. The chunk is read whole
     * before anything of it is emitted, so an {@code error} anywhere in it refuses all of it.
     */
    void onData(UpstreamHttp.SseView data) throws Refused {
        Chunk chunk = null;
        try {
            JsonParser p = parser.start(data);
            if (p.nextToken() == JsonToken.START_OBJECT) {
                Chunk read = new Chunk();
                read.fields(p);
                if (parser.restIsBlank(data)) {
                    chunk = read;
                }
            }
        } catch (IOException notUtf8OrNotJson) {
            // Read again below.
        }
        if (chunk == null) {
            // Not one object, nor one of a chunk's usual bytes: the parser cannot go on, and the chunk is
            // read again as text, as a chunk always was, where a byte that is not UTF-8 is U+FFFD (a
            // server's broken character spoils a character, not the answer) and the refusals say why.
            parser.drop();
            chunk = readAsText(data.text());
        }
        if (chunk == null) {
            throw new Refused("the model server sent an event that is not a JSON object: "
                    + UpstreamHttp.shorten(data.text()));
        }
        if (chunk.error) {
            throw new Refused("the model server reported an error mid-stream: " + UpstreamHttp.errorText(data.text()));
        }
        if (chunk.model != null && !chunk.model.isEmpty()) {
            model = chunk.model;
        }
        if (chunk.usage != null) {
            usage = chunk.usage;
        }
        if (chunk.choices == null) {
            return;
        }
        for (Choice choice : chunk.choices) {
            // n > 1 is never asked for; a server that sends other choices anyway is read for the first.
            if (choice.first) {
                choice(choice);
            }
        }
    }

    private void choice(Choice choice) throws Refused {
        if (choice.delta) {
            String thought = choice.reasoningContent != null ? choice.reasoningContent : choice.reasoning;
            if (thought != null && !thought.isEmpty()) {
                reasoning(thought);
            }
            String content = choice.content;
            if (content != null && !content.isEmpty()) {
                closeReasoning();
                if (messageId == null) {
                    messageId = Ids.next("msg");
                    ctx.emit(new Event.MessageStarted(messageId, Role.ASSISTANT));
                }
                text.append(content);
                ctx.emit(new Event.TextDelta(messageId, content));
            }
            JsonNode toolCalls = choice.toolCalls;
            if (toolCalls != null) {
                closeReasoning();
                for (int i = 0; i < toolCalls.size(); i++) {
                    fragment(toolCalls.get(i), i);
                }
            }
        }
        if (choice.finishReason != null) {
            finishReason = choice.finishReason;
        }
    }

    /**
     * What the turn reads of one {@code chat.completion.chunk}, read with the streaming parser under
     * the inbound limits: a chunk's tree of maps was a third of what the gateway allocated at a
     * model's pace (bench/NOTES.md). It keeps what a tree would answer: a field given twice counts
     * as its last value, a value of the wrong type as none, and text after the object is refused.
     * Only {@code usage} and {@code tool_calls}, rare and nested, are read as trees.
     */
    private static final class Chunk {
        boolean error;
        String model;
        JsonNode usage;
        /** Null when there is no {@code choices} array. */
        List<Choice> choices;

        /** The chunk the parser reads, or null when its data is one JSON value that is not an object. */
        static Chunk read(JsonParser p) throws IOException {
            JsonToken root = p.nextToken();
            Chunk c = null;
            if (root == JsonToken.START_OBJECT) {
                c = new Chunk();
                c.fields(p);
            } else if (root != null) {
                p.skipChildren();
            }
            if (root != null && p.nextToken() != null) {
                throw new JsonParseException(p, "text after the JSON value");
            }
            return c;
        }

        private void fields(JsonParser p) throws IOException {
            for (String name = p.nextFieldName(); name != null; name = p.nextFieldName()) {
                JsonToken v = p.nextToken();
                switch (name) {
                    case "error" -> {
                        error = v != JsonToken.VALUE_NULL;
                        p.skipChildren();
                    }
                    case "model" -> model = text(p, v);
                    case "usage" -> usage = v == JsonToken.START_OBJECT ? p.readValueAsTree() : skip(p);
                    case "choices" -> {
                        if (v == JsonToken.START_ARRAY) {
                            choices = new ArrayList<>(1);
                            while (p.nextToken() != JsonToken.END_ARRAY) {
                                if (p.currentToken() == JsonToken.START_OBJECT) {
                                    choices.add(Choice.read(p));
                                } else {
                                    // A tree would find no delta and no finish_reason in it.
                                    p.skipChildren();
                                }
                            }
                        } else {
                            choices = null;
                            p.skipChildren();
                        }
                    }
                    default -> p.skipChildren();
                }
            }
        }
    }

    private static Chunk readAsText(String data) throws Refused {
        try (JsonParser p = Json.MAPPER.createParser(data)) {
            return Chunk.read(p);
        } catch (IOException e) {
            throw new Refused("the model server sent an event that is not JSON: " + UpstreamHttp.shorten(data));
        }
    }

    /** One element of {@code choices}, an object. */
    private static final class Choice {
        /**
         * Whether its {@code index} is 0, as a tree's {@code asInt(0)} reads it, or absent: the choice
         * the turn reads.
         */
        boolean first = true;
        /** Whether {@code delta} is an object; its fields below. */
        boolean delta;
        String reasoningContent;
        String reasoning;
        String content;
        /** Null unless an array. */
        JsonNode toolCalls;
        String finishReason;

        static Choice read(JsonParser p) throws IOException {
            Choice c = new Choice();
            for (String name = p.nextFieldName(); name != null; name = p.nextFieldName()) {
                JsonToken v = p.nextToken();
                switch (name) {
                    case "index" -> c.first = index(p, v) == 0;
                    case "delta" -> c.delta(p, v);
                    case "finish_reason" -> c.finishReason = text(p, v);
                    default -> p.skipChildren();
                }
            }
            return c;
        }

        private void delta(JsonParser p, JsonToken v) throws IOException {
            delta = v == JsonToken.START_OBJECT;
            reasoningContent = null;
            reasoning = null;
            content = null;
            toolCalls = null;
            if (!delta) {
                p.skipChildren();
                return;
            }
            for (String name = p.nextFieldName(); name != null; name = p.nextFieldName()) {
                JsonToken t = p.nextToken();
                switch (name) {
                    case "reasoning_content" -> reasoningContent = text(p, t);
                    case "reasoning" -> reasoning = text(p, t);
                    case "content" -> content = text(p, t);
                    case "tool_calls" -> toolCalls = t == JsonToken.START_ARRAY ? p.readValueAsTree() : skip(p);
                    default -> p.skipChildren();
                }
            }
        }
    }

    /**
     * The value at the parser as a tree's {@code asInt(0)} reads it: an int as it is, without making
     * a tree (and the context that reads one) of it; anything else through a tree.
     */
    private static int index(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
            return p.getIntValue();
        }
        JsonNode tree = p.readValueAsTree();
        return tree.asInt(0);
    }

    /** The string at the parser, or null (the value skipped) when it is not a string. */
    private static String text(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        p.skipChildren();
        return null;
    }

    /** Skips the value at the parser; null, for a field whose value is of the wrong type. */
    private static JsonNode skip(JsonParser p) throws IOException {
        p.skipChildren();
        return null;
    }

    private void reasoning(String piece) {
        if (!reasoningOpen) {
            reasoningId = Ids.next("reasoning");
            reasoning.setLength(0);
            reasoningOpen = true;
            ctx.emit(new Event.ReasoningStarted(reasoningId));
        }
        reasoning.append(piece);
        ctx.emit(new Event.ReasoningDelta(reasoningId, piece));
    }

    private void closeReasoning() {
        if (reasoningOpen) {
            reasoningOpen = false;
            ctx.emit(new Event.ReasoningCompleted(reasoningId, reasoning.toString()));
        }
    }

    private void fragment(JsonNode f, int position) throws Refused {
        if (!f.isObject()) {
            throw new Refused("the model server sent a tool_calls entry that is not an object: " + UpstreamHttp.shorten(f.toString()));
        }
        int index = f.path("index").canConvertToInt() && f.path("index").isIntegralNumber()
                ? f.get("index").intValue() : position;
        Call call = calls.computeIfAbsent(index, k -> new Call());
        String id = textOf(f, "id");
        if (call.id == null && id != null && !id.isEmpty()) {
            call.id = id;
        }
        JsonNode function = f.path("function");
        String name = textOf(function, "name");
        if (call.name == null && name != null && !name.isEmpty()) {
            call.name = name;
        }
        JsonNode args = function.get("arguments");
        String piece = args == null || args.isNull() ? "" : args.isTextual() ? args.textValue() : args.toString();
        call.arguments.append(piece);
        if (!call.started && call.name != null) {
            call.started = true;
            if (call.id == null) {
                call.id = Ids.next("call");
            }
            ctx.emit(new Event.ToolCallStarted(call.id, call.name, null));
            if (!call.arguments.isEmpty()) {
                ctx.emit(new Event.ToolCallArgs(call.id, call.arguments.toString()));
            }
        } else if (call.started && !piece.isEmpty()) {
            ctx.emit(new Event.ToolCallArgs(call.id, piece));
        }
    }

    /** Whether the model said why it stopped ({@code finish_reason}). */
    boolean finished() {
        return finishReason != null;
    }

    /**
     * Ends the turn: completes the reasoning, the text and every tool call, then reports the usage.
     * Refused when a tool call never got a name.
     */
    void complete() throws Refused {
        parser.drop();
        closeReasoning();
        if (messageId != null) {
            ctx.emit(new Event.MessageCompleted(messageId, text.toString(), List.of()));
        }
        for (Call call : calls.values()) {
            if (!call.started) {
                throw new Refused("the model server sent a tool call without a function name");
            }
            call.parsed = parseArguments(call.arguments.toString());
            ctx.emit(new Event.ToolCallCompleted(call.id, call.name, call.parsed));
        }
        if (usage != null) {
            ctx.emit(new Event.Usage(model != null ? model : configuredModel, count(usage, "prompt_tokens"),
                    count(usage, "completion_tokens"),
                    optionalCount(usage.path("completion_tokens_details"), "reasoning_tokens"),
                    optionalCount(usage.path("prompt_tokens_details"), "cached_tokens")));
        }
    }

    /** The tool calls, in index order; valid after {@link #complete()}. */
    List<Call> calls() {
        return List.copyOf(calls.values());
    }

    /** The model the server said answered; null when it named none. */
    String responseModel() {
        return model;
    }

    /** The tokens the server reported, {prompt, completion}; null when it reported none. */
    long[] usage() {
        return usage == null ? null : new long[] {count(usage, "prompt_tokens"), count(usage, "completion_tokens")};
    }

    /** The answer's text so far. */
    String text() {
        return text.toString();
    }

    /** What the turn adds to the conversation, as the store keeps it: the text, then each tool call. */
    List<InputMessage> messages() {
        List<InputMessage> out = new ArrayList<>(1 + calls.size());
        if (messageId != null) {
            out.add(InputMessage.text(messageId, Role.ASSISTANT, text.toString()));
        }
        for (Call call : calls.values()) {
            out.add(new InputMessage(call.id, Role.ASSISTANT, "",
                    List.of(new ToolCallRef(call.id, call.name, call.arguments.toString())), null, null));
        }
        return out;
    }

    private static JsonNode parseArguments(String text) {
        if (text.isBlank()) {
            return Json.object();
        }
        try {
            JsonNode node = Json.parseStrict(text);
            return node.isObject() ? node : null;
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static String textOf(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() ? v.textValue() : null;
    }

    private static long count(JsonNode usage, String field) {
        JsonNode v = usage.get(field);
        return v != null && v.canConvertToLong() && v.asLong() >= 0 ? v.asLong() : 0;
    }

    private static Long optionalCount(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isIntegralNumber() && v.asLong() >= 0 ? v.asLong() : null;
    }
}
