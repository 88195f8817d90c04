package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.Json;

import java.util.Map;

/**
 * Field checks shared by the decoders of JSON dialects. Each reads one field of an object and
 * throws {@link Refused}, carrying a MISSING_FIELD or INVALID_FIELD failure that names the field
 * ({@code at}, its path in the document) and what it accepts. A JSON {@code null} counts as
 * absent, as the official clients send unset optional fields so.
 */
public final class JsonInput {
    /** The longest peer value {@link #echo} shows back. */
    public static final int MAX_ECHOED_CHARS = 64;

    /** Bad input, as a value to return: a decoder catches it and answers {@link #failure()}. */
    public static final class Refused extends Exception {
        private final transient Decoded.Failure failure;

        public Refused(Decoded.Failure failure) {
            super(null, null, false, false);
            this.failure = failure;
        }

        public Decoded.Failure failure() {
            return failure;
        }
    }

    private JsonInput() {
    }

    public static boolean absent(JsonNode node) {
        return node == null || node.isNull();
    }

    public static Refused missing(String field, String accepts) {
        return new Refused(new Decoded.Failure(
                GatewayError.field(ErrorCode.MISSING_FIELD, field, field + " is required: " + accepts)));
    }

    public static Refused invalid(String field, String accepts) {
        return new Refused(new Decoded.Failure(
                GatewayError.field(ErrorCode.INVALID_FIELD, field, field + " must be " + accepts)));
    }

    /**
     * Parses a frame that must be one JSON object, refusing anything else with INVALID_JSON;
     * {@code notAnObject} is the failure's message, such as "a HAI message is a JSON object".
     */
    public static JsonNode parseObject(String text, String notAnObject) throws Refused {
        JsonNode root;
        try {
            root = Json.parseStrict(text);
        } catch (JsonProcessingException e) {
            // also covers StreamConstraintsException: nesting, number or string length over the limits
            throw refused(ErrorCode.INVALID_JSON, "the message is not valid JSON: " + e.getOriginalMessage());
        }
        if (root.isMissingNode()) {
            throw refused(ErrorCode.INVALID_JSON, "the message is empty; " + notAnObject);
        }
        if (!root.isObject()) {
            throw refused(ErrorCode.INVALID_JSON, notAnObject);
        }
        return root;
    }

    /** UNKNOWN_TYPE for a message whose {@code type} the dialect does not take; {@code accepted} lists those it does. */
    public static Decoded.Failure unknownType(JsonNode type, String accepted) {
        return new Decoded.Failure(new GatewayError(ErrorCode.UNKNOWN_TYPE,
                "unknown message type \"" + echo(type) + "\"; a client sends " + accepted, Map.of("type", echo(type))));
    }

    public static String requiredString(JsonNode obj, String name, String at) throws Refused {
        return string(obj, name, at, true, false, Integer.MAX_VALUE, "a string");
    }

    public static String optionalString(JsonNode obj, String name, String at) throws Refused {
        return string(obj, name, at, false, false, Integer.MAX_VALUE, "a string");
    }

    /** An optional string of at most {@code maxChars} characters (code points). */
    public static String optionalString(JsonNode obj, String name, String at, int maxChars) throws Refused {
        return string(obj, name, at, false, false, maxChars, "a string of at most " + maxChars + " characters");
    }

    public static String requiredId(JsonNode obj, String name, String at) throws Refused {
        return string(obj, name, at, true, true, Integer.MAX_VALUE, "a non-empty string");
    }

    /** A required non-empty string of at most {@code maxChars} characters (code points). */
    public static String requiredId(JsonNode obj, String name, String at, int maxChars) throws Refused {
        return string(obj, name, at, true, true, maxChars, "a non-empty string of at most " + maxChars + " characters");
    }

    public static String optionalId(JsonNode obj, String name, String at) throws Refused {
        return absent(obj.get(name)) ? null : requiredId(obj, name, at);
    }

    /**
     * A required string that is not blank ({@link #blank}) and has at most {@code maxChars}
     * characters (code points), such as a person's message.
     */
    public static String requiredText(JsonNode obj, String name, String at, int maxChars) throws Refused {
        String text = optionalText(obj, name, at, maxChars);
        if (text == null) {
            throw missing(at, textRule(maxChars));
        }
        return text;
    }

    /** As {@link #requiredText}, but absent is null. */
    public static String optionalText(JsonNode obj, String name, String at, int maxChars) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            return null;
        }
        if (!node.isTextual() || blank(node.textValue()) || codePoints(node.textValue()) > maxChars) {
            throw invalid(at, textRule(maxChars));
        }
        return node.textValue();
    }

    public static boolean requiredBoolean(JsonNode obj, String name, String at) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            throw missing(at, "a boolean");
        }
        return optionalBoolean(obj, name, at, false);
    }

    public static boolean optionalBoolean(JsonNode obj, String name, boolean otherwise) throws Refused {
        return optionalBoolean(obj, name, name, otherwise);
    }

    public static boolean optionalBoolean(JsonNode obj, String name, String at, boolean otherwise) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            return otherwise;
        }
        if (!node.isBoolean()) {
            throw invalid(at, "a boolean");
        }
        return node.booleanValue();
    }

    /** An optional object; null when absent. */
    public static JsonNode optionalObject(JsonNode obj, String name, String at) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            return null;
        }
        if (!node.isObject()) {
            throw invalid(at, "an object");
        }
        return node;
    }

    /** The text, when it has at most {@code maxChars} characters (code points); refused otherwise. */
    public static String checkLength(String text, String at, int maxChars) throws Refused {
        if (text.length() > maxChars && codePoints(text) > maxChars) {
            throw invalid(at, "at most " + maxChars + " characters");
        }
        return text;
    }

    /** The length of a string as a person counts it: in code points, not UTF-16 units. */
    public static int codePoints(String s) {
        return s.codePointCount(0, s.length());
    }

    /** True when every character is white space, including Unicode spaces such as U+00A0; true for "". */
    public static boolean blank(String s) {
        return s.codePoints().allMatch(cp -> Character.isWhitespace(cp) || Character.isSpaceChar(cp));
    }

    /**
     * A peer's value shown back in an error: a string unquoted, anything else as JSON, {@code (none)}
     * for no node, cut to {@value #MAX_ECHOED_CHARS} characters with a trailing {@code …}.
     */
    public static String echo(JsonNode node) {
        String s = node == null ? "(none)" : Json.text(node);
        if (codePoints(s) <= MAX_ECHOED_CHARS) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, MAX_ECHOED_CHARS)) + "…";
    }

    /** What {@link #requiredText} accepts, as its failures state it. */
    public static String textRule(int maxChars) {
        return "a string of 1 to " + maxChars + " characters, not only whitespace";
    }

    private static String string(JsonNode obj, String name, String at, boolean required, boolean nonEmpty,
                                 int maxChars, String accepts) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            if (required) {
                throw missing(at, accepts);
            }
            return null;
        }
        String text = node.isTextual() ? node.textValue() : null;
        if (text == null || (nonEmpty && text.isEmpty()) || (text.length() > maxChars && codePoints(text) > maxChars)) {
            throw invalid(at, accepts);
        }
        return text;
    }

    private static Refused refused(ErrorCode code, String message) {
        return new Refused(new Decoded.Failure(GatewayError.of(code, message)));
    }
}
