package dev.switchboard.adapter.a2h;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;

import java.io.UncheckedIOException;

/**
 * Reads one request body field by field and keeps the first problem: once a read has failed,
 * later reads return null and change nothing, so a handler reads everything and then asks
 * {@link #error()} once.
 *
 * <p>A field sent as JSON {@code null} counts as absent, as the HumanLayer Python SDK sends
 * every unset optional field that way.
 */
final class A2hInput {
    /** The longest id (call, run, human, session) accepted. */
    static final int MAX_ID_CHARS = 128;
    /** The longest text field (function name, message, comment, response) accepted. */
    static final int MAX_TEXT_CHARS = 100_000;

    private GatewayError error;

    /** The body as a JSON object, or null after recording a 400. */
    ObjectNode body(String text) {
        JsonNode root;
        try {
            root = Json.parseStrict(text);
        } catch (JsonProcessingException e) {
            return fail(GatewayError.of(ErrorCode.INVALID_JSON, "the request body is not valid JSON: "
                    + e.getOriginalMessage()));
        }
        if (!root.isObject()) {
            return fail(GatewayError.of(ErrorCode.INVALID_JSON, "the request body must be a JSON object"));
        }
        return (ObjectNode) root;
    }

    /** A required object field. */
    ObjectNode object(JsonNode parent, String field, String at) {
        JsonNode v = get(parent, field);
        if (v == null) {
            return error == null && parent != null ? missing(at, "an object") : null;
        }
        return v.isObject() ? (ObjectNode) v : invalid(at, "an object");
    }

    /** An optional object field; null when absent. */
    ObjectNode optionalObject(JsonNode parent, String field, String at) {
        JsonNode v = get(parent, field);
        if (v == null) {
            return null;
        }
        return v.isObject() ? (ObjectNode) v : invalid(at, "an object");
    }

    /** A required string that is not blank, at most {@code max} characters. */
    String text(JsonNode parent, String field, String at, int max) {
        JsonNode v = get(parent, field);
        String rule = "a non-blank string of at most " + max + " characters";
        if (v == null) {
            return error == null && parent != null ? missing(at, rule) : null;
        }
        if (!v.isTextual() || v.textValue().isBlank() || length(v.textValue()) > max) {
            return invalid(at, rule);
        }
        return v.textValue();
    }

    /** An optional string of at most {@code max} characters; null when absent. */
    String optionalText(JsonNode parent, String field, String at, int max) {
        JsonNode v = get(parent, field);
        if (v == null) {
            return null;
        }
        if (!v.isTextual() || length(v.textValue()) > max) {
            return invalid(at, "a string of at most " + max + " characters");
        }
        return v.textValue();
    }

    /** A required id: not blank, at most {@link #MAX_ID_CHARS} characters, no {@code /} (it names a path). */
    String id(JsonNode parent, String field, String at) {
        String id = text(parent, field, at, MAX_ID_CHARS);
        if (id != null && (id.indexOf('/') >= 0 || !id.strip().equals(id))) {
            return invalid(at, "a string of 1 to " + MAX_ID_CHARS
                    + " characters without '/' or leading or trailing whitespace");
        }
        return id;
    }

    /** A required boolean. */
    Boolean bool(JsonNode parent, String field, String at) {
        JsonNode v = get(parent, field);
        if (v == null) {
            return error == null && parent != null ? missing(at, "true or false") : null;
        }
        return v.isBoolean() ? v.booleanValue() : invalid(at, "true or false");
    }

    /**
     * An optional list of response options ({@code {name, title?, description?, prompt_fill?,
     * interactive?}}); null when absent.
     */
    JsonNode options(JsonNode parent, String field, String at) {
        JsonNode v = get(parent, field);
        if (v == null) {
            return null;
        }
        if (!v.isArray()) {
            return invalid(at, "an array of {name, title?, description?} objects");
        }
        for (int i = 0; i < v.size(); i++) {
            JsonNode o = v.get(i);
            if (!o.isObject()) {
                return invalid(at + "[" + i + "]", "an object with a name");
            }
            text(o, "name", at + "[" + i + "].name", MAX_ID_CHARS);
        }
        return error == null ? v : null;
    }

    /** A document this module stored (trusted, so a failure here is the store's fault). */
    static ObjectNode stored(String json) {
        try {
            return (ObjectNode) Json.STORED_MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("a stored A2H document is not JSON", e);
        }
    }

    /** Records a problem found by the caller; returns null for a one-line {@code return}. */
    <T> T fail(GatewayError problem) {
        if (error == null) {
            error = problem;
        }
        return null;
    }

    <T> T invalid(String at, String rule) {
        return fail(GatewayError.field(ErrorCode.INVALID_FIELD, at, at + " must be " + rule));
    }

    private <T> T missing(String at, String rule) {
        return fail(GatewayError.field(ErrorCode.MISSING_FIELD, at, at + " is required: " + rule));
    }

    boolean failed() {
        return error != null;
    }

    /** The first problem, or null. */
    GatewayError error() {
        return error;
    }

    /** The field's value, or null when it is absent, JSON null, or an earlier read failed. */
    private JsonNode get(JsonNode parent, String field) {
        if (error != null || parent == null) {
            return null;
        }
        JsonNode v = parent.get(field);
        return v == null || v.isNull() ? null : v;
    }

    private static int length(String s) {
        return s.codePointCount(0, s.length());
    }
}
