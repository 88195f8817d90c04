package dev.switchboard.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.switchboard.core.ErrorCode;
import dev.switchboard.core.GatewayError;
import dev.switchboard.core.spi.Decoded;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.params.provider.Arguments;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A table of inputs that break one field each of a valid JSON object: the field left out, sent
 * as {@code null} or as a value of the wrong type, each with the failure a decoder must answer
 * (MISSING_FIELD or INVALID_FIELD, naming the field). The table runs as a {@code @TestFactory}
 * ({@link #refusedBy}) or gives its rows {@code (name, input, code, field)} to a
 * {@code @MethodSource}; a field is named by its path, such as {@code metadata.stream} or
 * {@code messages[0].role}.
 */
public final class FieldCases {
    private static final String[][] NOT_STRINGS = {{"a number", "42"}, {"an object", "{}"}, {"an array", "[\"x\"]"},
        {"a boolean", "true"}};
    private static final String[][] NOT_BOOLEANS = {{"a string", "\"true\""}, {"a number", "1"}};
    private static final String[][] NOT_OBJECTS = {{"an array", "[]"}, {"a string", "\"x\""}, {"a number", "1"}};
    private static final String[][] NOT_ARRAYS = {{"an object", "{}"}, {"a string", "\"x\""}, {"a number", "1"}};

    private final ObjectNode valid;
    private final List<Arguments> rows = new ArrayList<>();

    private FieldCases(ObjectNode valid) {
        this.valid = valid;
    }

    /** Cases made from this valid input, a JSON object. */
    public static FieldCases in(String validObject) {
        return new FieldCases((ObjectNode) Fixtures.json(validObject));
    }

    /** Required string: missing or null, and each other type. */
    public FieldCases requiredString(String field) {
        return missingOrNull(field).wrongTypes(field, NOT_STRINGS);
    }

    /** Required non-empty string: as {@link #requiredString}, and empty. */
    public FieldCases requiredId(String field) {
        return requiredString(field).invalid(field, "empty", "\"\"");
    }

    /** Optional string: each other type. */
    public FieldCases optionalString(String field) {
        return wrongTypes(field, NOT_STRINGS);
    }

    /** Optional non-empty string: each other type, and empty. */
    public FieldCases optionalId(String field) {
        return optionalString(field).invalid(field, "empty", "\"\"");
    }

    public FieldCases requiredBoolean(String field) {
        return missingOrNull(field).wrongTypes(field, NOT_BOOLEANS);
    }

    public FieldCases optionalBoolean(String field) {
        return wrongTypes(field, NOT_BOOLEANS);
    }

    public FieldCases requiredObject(String field) {
        return missingOrNull(field).wrongTypes(field, NOT_OBJECTS);
    }

    public FieldCases optionalObject(String field) {
        return wrongTypes(field, NOT_OBJECTS);
    }

    public FieldCases requiredArray(String field) {
        return missingOrNull(field).wrongTypes(field, NOT_ARRAYS);
    }

    public FieldCases optionalArray(String field) {
        return wrongTypes(field, NOT_ARRAYS);
    }

    /** One more case: the field set to this JSON value, refused as INVALID_FIELD. */
    public FieldCases invalid(String field, String name, String valueJson) {
        return row(field + " " + name, with(field, valueJson), ErrorCode.INVALID_FIELD, field);
    }

    /** One more case given whole: an input and the failure it must get. */
    public FieldCases row(String name, String input, ErrorCode code, String field) {
        rows.add(Arguments.of(name, input, code, field));
        return this;
    }

    /** The valid input with the field at this path set to a JSON value, or removed for null. */
    public String with(String field, String valueJson) {
        ObjectNode copy = valid.deepCopy();
        String[] steps = field.split("\\.");
        JsonNode parent = copy;
        for (int i = 0; i < steps.length - 1; i++) {
            parent = step(parent, steps[i]);
        }
        String last = steps[steps.length - 1];
        if (last.endsWith("]")) {
            int open = last.indexOf('[');
            ArrayNode array = (ArrayNode) parent.get(last.substring(0, open));
            int index = Integer.parseInt(last.substring(open + 1, last.length() - 1));
            if (valueJson == null) {
                array.remove(index);
            } else {
                array.set(index, Fixtures.json(valueJson));
            }
        } else if (valueJson == null) {
            ((ObjectNode) parent).remove(last);
        } else {
            ((ObjectNode) parent).set(last, Fixtures.json(valueJson));
        }
        return copy.toString();
    }

    /** The rows: {@code (String name, String input, ErrorCode code, String field)}. */
    public Stream<Arguments> rows() {
        return rows.stream();
    }

    /** One test a row, each checking that the decoder refuses the row's input as {@link #assertRefused} does. */
    public Stream<DynamicTest> refusedBy(Function<String, Decoded> decoder) {
        return rows.stream().map(row -> {
            Object[] r = row.get();
            return DynamicTest.dynamicTest((String) r[0],
                    () -> assertRefused(decoder.apply((String) r[1]), (ErrorCode) r[2], (String) r[3]));
        });
    }

    /**
     * Checks that a decoder refused an input with this code naming this field, alone in the
     * details, in a message that starts with the field's name.
     */
    public static void assertRefused(Decoded decoded, ErrorCode code, String field) {
        GatewayError error = assertInstanceOf(Decoded.Failure.class, decoded).error();
        assertEquals(code, error.code(), () -> "code of " + error);
        assertEquals(Map.of("field", field), error.details(), () -> "details of " + error);
        assertTrue(error.message().startsWith(field + " "), () -> "message of " + error);
    }

    private FieldCases missingOrNull(String field) {
        row(field + " missing", with(field, null), ErrorCode.MISSING_FIELD, field);
        return row(field + " null", with(field, "null"), ErrorCode.MISSING_FIELD, field);
    }

    private FieldCases wrongTypes(String field, String[][] values) {
        for (String[] value : values) {
            invalid(field, value[0], value[1]);
        }
        return this;
    }

    /** The child an intermediate step names ({@code name} or {@code name[i]}), made an object if absent. */
    private static JsonNode step(JsonNode parent, String step) {
        if (step.endsWith("]")) {
            int open = step.indexOf('[');
            return parent.get(step.substring(0, open)).get(Integer.parseInt(step.substring(open + 1, step.length() - 1)));
        }
        JsonNode child = parent.get(step);
        return child != null && child.isObject() ? child : ((ObjectNode) parent).putObject(step);
    }
}
