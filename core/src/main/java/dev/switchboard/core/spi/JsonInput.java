package dev.switchboard.core.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;

/**
 * Field checks shared by the decoders of JSON dialects. Each reads one field of an object and
 * throws {@link Refused}, carrying a MISSING_FIELD or INVALID_FIELD failure that names the field
 * ({@code at}, its path in the document) and what it accepts. A JSON {@code null} counts as
 * absent, as the official clients send unset optional fields so.
 */
public final class JsonInput {

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

    public static String requiredString(JsonNode obj, String name, String at) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            throw missing(at, "a string");
        }
        if (!node.isTextual()) {
            throw invalid(at, "a string");
        }
        return node.textValue();
    }

    public static String optionalString(JsonNode obj, String name, String at) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            return null;
        }
        if (!node.isTextual()) {
            throw invalid(at, "a string");
        }
        return node.textValue();
    }

    public static String requiredId(JsonNode obj, String name, String at) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            throw missing(at, "a non-empty string");
        }
        if (!node.isTextual() || node.textValue().isEmpty()) {
            throw invalid(at, "a non-empty string");
        }
        return node.textValue();
    }

    public static String optionalId(JsonNode obj, String name, String at) throws Refused {
        return absent(obj.get(name)) ? null : requiredId(obj, name, at);
    }

    public static boolean optionalBoolean(JsonNode obj, String name, boolean otherwise) throws Refused {
        JsonNode node = obj.get(name);
        if (absent(node)) {
            return otherwise;
        }
        if (!node.isBoolean()) {
            throw invalid(name, "a boolean");
        }
        return node.booleanValue();
    }
}
