package dev.switchboard.adapter.agui;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The ordering rules of {@code @ag-ui/client} 1.0's {@code verifyEvents} (src/verify/verify.ts), and
 * the required fields of {@code @ag-ui/core}'s event schemas, for the events the gateway sends: a
 * stream this accepts is one the official client accepts.
 */
final class OfficialVerifier {
    private static final Map<String, List<String>> REQUIRED_STRINGS = Map.ofEntries(
            Map.entry("RUN_STARTED", List.of("threadId", "runId")),
            Map.entry("RUN_FINISHED", List.of("threadId", "runId")),
            Map.entry("RUN_ERROR", List.of("message")),
            Map.entry("STEP_STARTED", List.of("stepName")),
            Map.entry("STEP_FINISHED", List.of("stepName")),
            Map.entry("TEXT_MESSAGE_START", List.of("messageId")),
            Map.entry("TEXT_MESSAGE_CONTENT", List.of("messageId", "delta")),
            Map.entry("TEXT_MESSAGE_END", List.of("messageId")),
            Map.entry("TOOL_CALL_START", List.of("toolCallId", "toolCallName")),
            Map.entry("TOOL_CALL_ARGS", List.of("toolCallId", "delta")),
            Map.entry("TOOL_CALL_END", List.of("toolCallId")),
            Map.entry("TOOL_CALL_RESULT", List.of("messageId", "toolCallId", "content")),
            Map.entry("REASONING_START", List.of("messageId")),
            Map.entry("REASONING_MESSAGE_START", List.of("messageId", "role")),
            Map.entry("REASONING_MESSAGE_CONTENT", List.of("messageId", "delta")),
            Map.entry("REASONING_MESSAGE_END", List.of("messageId")),
            Map.entry("REASONING_END", List.of("messageId")),
            Map.entry("STATE_SNAPSHOT", List.of()),
            Map.entry("STATE_DELTA", List.of()),
            Map.entry("CUSTOM", List.of("name")));
    private static final Set<String> TEXT_ROLES = Set.of("developer", "system", "assistant", "user");

    private OfficialVerifier() {
    }

    /** What the official client would reject in this stream, in order; empty when it accepts it all. */
    static List<String> violations(List<JsonNode> events) {
        List<String> out = new ArrayList<>();
        boolean first = true;
        boolean started = false;
        boolean finished = false;
        boolean errored = false;
        Set<String> messages = new HashSet<>();
        Set<String> toolCalls = new HashSet<>();
        Set<String> steps = new HashSet<>();
        Set<String> spans = new HashSet<>();
        Set<String> reasoning = new HashSet<>();
        for (JsonNode e : events) {
            String type = e.path("type").asText();
            out.addAll(shape(e, type));
            if (errored && !type.equals("RUN_STARTED")) {
                out.add(type + " after RUN_ERROR");
                continue;
            }
            if (finished && !type.equals("RUN_ERROR") && !type.equals("RUN_STARTED")) {
                out.add(type + " after RUN_FINISHED");
                continue;
            }
            if (first) {
                first = false;
                if (!type.equals("RUN_STARTED") && !type.equals("RUN_ERROR")) {
                    out.add("first event is " + type + ", not RUN_STARTED");
                }
            } else if (type.equals("RUN_STARTED")) {
                if (started && !finished && !errored) {
                    out.add("RUN_STARTED while a run is active");
                }
                messages.clear();
                toolCalls.clear();
                steps.clear();
                spans.clear();
                reasoning.clear();
                finished = false;
                errored = false;
            }
            String messageId = e.path("messageId").asText();
            String toolCallId = e.path("toolCallId").asText();
            String stepName = e.path("stepName").asText();
            switch (type) {
                case "RUN_STARTED" -> started = true;
                case "TEXT_MESSAGE_START" -> {
                    if (!messages.add(messageId)) {
                        out.add("TEXT_MESSAGE_START of open message " + messageId);
                    }
                }
                case "TEXT_MESSAGE_CONTENT" -> {
                    if (!messages.contains(messageId)) {
                        out.add("TEXT_MESSAGE_CONTENT without start: " + messageId);
                    }
                }
                case "TEXT_MESSAGE_END" -> {
                    if (!messages.remove(messageId)) {
                        out.add("TEXT_MESSAGE_END without start: " + messageId);
                    }
                }
                case "TOOL_CALL_START" -> {
                    if (!toolCalls.add(toolCallId)) {
                        out.add("TOOL_CALL_START of open tool call " + toolCallId);
                    }
                }
                case "TOOL_CALL_ARGS" -> {
                    if (!toolCalls.contains(toolCallId)) {
                        out.add("TOOL_CALL_ARGS without start: " + toolCallId);
                    }
                }
                case "TOOL_CALL_END" -> {
                    if (!toolCalls.remove(toolCallId)) {
                        out.add("TOOL_CALL_END without start: " + toolCallId);
                    }
                }
                case "STEP_STARTED" -> {
                    if (!steps.add(stepName)) {
                        out.add("STEP_STARTED of active step " + stepName);
                    }
                }
                case "STEP_FINISHED" -> {
                    if (!steps.remove(stepName)) {
                        out.add("STEP_FINISHED of inactive step " + stepName);
                    }
                }
                case "REASONING_START" -> {
                    if (!spans.add(messageId)) {
                        out.add("REASONING_START of open span " + messageId);
                    }
                }
                case "REASONING_END" -> {
                    if (!spans.remove(messageId)) {
                        out.add("REASONING_END without start: " + messageId);
                    }
                }
                case "REASONING_MESSAGE_START" -> {
                    if (!reasoning.add(messageId)) {
                        out.add("REASONING_MESSAGE_START of open message " + messageId);
                    }
                }
                case "REASONING_MESSAGE_CONTENT" -> {
                    if (!reasoning.contains(messageId)) {
                        out.add("REASONING_MESSAGE_CONTENT without start: " + messageId);
                    }
                }
                case "REASONING_MESSAGE_END" -> {
                    if (!reasoning.remove(messageId)) {
                        out.add("REASONING_MESSAGE_END without start: " + messageId);
                    }
                }
                case "RUN_FINISHED" -> {
                    if (!steps.isEmpty() || !messages.isEmpty() || !toolCalls.isEmpty() || !spans.isEmpty()
                            || !reasoning.isEmpty()) {
                        out.add("RUN_FINISHED with open steps " + steps + ", messages " + messages
                                + ", tool calls " + toolCalls + ", reasoning spans " + spans
                                + ", reasoning messages " + reasoning);
                    }
                    finished = true;
                }
                case "RUN_ERROR" -> errored = true;
                default -> {
                }
            }
        }
        return out;
    }

    private static List<String> shape(JsonNode e, String type) {
        List<String> out = new ArrayList<>();
        List<String> required = REQUIRED_STRINGS.get(type);
        if (required == null) {
            out.add("unknown event type " + type);
            return out;
        }
        for (String field : required) {
            if (!e.path(field).isTextual()) {
                out.add(type + "." + field + " is not a string");
            }
        }
        switch (type) {
            case "TEXT_MESSAGE_START" -> {
                if (e.has("role") && !TEXT_ROLES.contains(e.get("role").asText())) {
                    out.add("TEXT_MESSAGE_START.role " + e.get("role"));
                }
            }
            case "STATE_SNAPSHOT" -> {
                if (!e.has("snapshot")) {
                    out.add("STATE_SNAPSHOT without snapshot");
                }
            }
            case "STATE_DELTA" -> {
                if (!e.path("delta").isArray()) {
                    out.add("STATE_DELTA.delta is not an array");
                }
            }
            case "CUSTOM" -> {
                if (!e.has("value")) {
                    out.add("CUSTOM without value");
                }
            }
            case "REASONING_MESSAGE_START" -> {
                if (!"reasoning".equals(e.path("role").asText())) {
                    out.add("REASONING_MESSAGE_START.role " + e.get("role"));
                }
            }
            case "RUN_FINISHED" -> {
                out.addAll(outcome(e.get("outcome")));
                out.addAll(usage(e.get("usage")));
            }
            case "RUN_ERROR" -> out.addAll(usage(e.get("usage")));
            default -> {
            }
        }
        return out;
    }

    /** TokenUsage entries: optional labels and non-negative integer counts. */
    private static List<String> usage(JsonNode usage) {
        if (usage == null) {
            return List.of();
        }
        if (!usage.isArray()) {
            return List.of("usage is not an array");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode entry : usage) {
            entry.properties().forEach(f -> {
                boolean label = f.getKey().equals("provider") || f.getKey().equals("model");
                if (label ? !f.getValue().isTextual() : !f.getValue().canConvertToLong() || f.getValue().asLong() < 0) {
                    out.add("usage." + f.getKey() + " is " + f.getValue());
                }
            });
        }
        return out;
    }

    private static List<String> outcome(JsonNode outcome) {
        if (outcome == null) {
            return List.of();
        }
        String type = outcome.path("type").asText();
        if (type.equals("success") || type.equals("cancelled")) {
            return List.of();
        }
        if (!type.equals("interrupt")) {
            return List.of("outcome type " + type);
        }
        JsonNode interrupts = outcome.get("interrupts");
        if (interrupts == null || !interrupts.isArray() || interrupts.isEmpty()) {
            return List.of("an interrupt outcome needs at least one interrupt");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode i : interrupts) {
            if (!i.path("id").isTextual() || !i.path("reason").isTextual()) {
                out.add("interrupt without id and reason: " + i);
            }
            if (i.has("metadata") && !i.get("metadata").isObject()) {
                out.add("interrupt metadata is not an object: " + i);
            }
            if (i.has("responseSchema") && !i.get("responseSchema").isObject()) {
                out.add("interrupt responseSchema is not an object: " + i);
            }
        }
        return out;
    }
}
