package dev.switchboard.core.spi;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.switchboard.core.Json;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One option a plugin (or the host) reads: its name, what it accepts, its default and its help.
 * The host turns every declared option into a flag {@code --name}, an environment variable
 * {@code SWITCHBOARD_NAME} and a key of the config file, checks each value against the spec before
 * anything starts, and lists the option under its plugin in {@code --help}. A plugin then reads the
 * checked values through {@link Settings}.
 *
 * <p>Build one with a factory ({@link #text}, {@link #integer}, {@link #bool}, {@link #list},
 * {@link #json}, {@link #choice}) and refine it with {@link #alsoFromEnv} and {@link #checkedBy}.
 *
 * @param name         the option's name, lower-case words joined by dashes
 * @param type         what kind of value it takes
 * @param defaultValue the value when none is given; empty for none
 * @param help         one sentence for {@code --help}
 * @param min          the least value of an {@link Type#INT} option
 * @param max          the greatest value of an {@link Type#INT} option
 * @param choices      the values a {@link Type#CHOICE} option takes (lower case)
 * @param envAliases   further environment variables read below {@code SWITCHBOARD_NAME}
 * @param check        a further check of a value that passed the type's, or null
 */
public record OptionSpec(String name, Type type, String defaultValue, String help, int min, int max,
                         List<String> choices, List<String> envAliases, Check check) {

    /** The kinds of value an option takes. */
    public enum Type { TEXT, INT, BOOL, LIST, JSON, CHOICE }

    /** A check of one value beyond its type: returns what is wrong with it, or null when nothing is. */
    @FunctionalInterface
    public interface Check {
        String problem(String value);
    }

    /** The environment variables' common prefix. */
    public static final String ENV_PREFIX = "SWITCHBOARD_";

    public OptionSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        if (!name.matches("[a-z][a-z0-9]*(-[a-z0-9]+)*")) {
            throw new IllegalArgumentException("option name '" + name
                    + "' must be lower-case words joined by dashes, such as upstream-timeout-seconds");
        }
        defaultValue = defaultValue == null ? "" : defaultValue;
        help = help == null ? "" : help;
        choices = List.copyOf(choices);
        envAliases = List.copyOf(envAliases);
    }

    public static OptionSpec text(String name, String defaultValue, String help) {
        return new OptionSpec(name, Type.TEXT, defaultValue, help, 0, 0, List.of(), List.of(), null);
    }

    public static OptionSpec integer(String name, int defaultValue, int min, int max, String help) {
        return new OptionSpec(name, Type.INT, Integer.toString(defaultValue), help, min, max, List.of(), List.of(),
                null);
    }

    public static OptionSpec bool(String name, boolean defaultValue, String help) {
        return new OptionSpec(name, Type.BOOL, Boolean.toString(defaultValue), help, 0, 0, List.of(), List.of(),
                null);
    }

    /** A repeatable option: the flag may be given several times, the variable holds a comma-separated list. */
    public static OptionSpec list(String name, String help) {
        return new OptionSpec(name, Type.LIST, "", help, 0, 0, List.of(), List.of(), null);
    }

    public static OptionSpec json(String name, String defaultValue, String help) {
        return new OptionSpec(name, Type.JSON, defaultValue, help, 0, 0, List.of(), List.of(), null);
    }

    public static OptionSpec choice(String name, String defaultValue, String help, String... choices) {
        return new OptionSpec(name, Type.CHOICE, defaultValue, help, 0, 0, List.of(choices), List.of(), null);
    }

    /** The same option, also read from {@code variable} (below {@code SWITCHBOARD_NAME}; merged for a list). */
    public OptionSpec alsoFromEnv(String variable) {
        List<String> aliases = new ArrayList<>(envAliases);
        aliases.add(variable);
        return new OptionSpec(name, type, defaultValue, help, min, max, choices, aliases, check);
    }

    /** The same option with a further check of its values. */
    public OptionSpec checkedBy(Check further) {
        return new OptionSpec(name, type, defaultValue, help, min, max, choices, envAliases, further);
    }

    /** The option's own environment variable, {@code SWITCHBOARD_<NAME>}. */
    public String envName() {
        return ENV_PREFIX + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** Every environment variable the option is read from, its own first. */
    public List<String> envNames() {
        List<String> all = new ArrayList<>(envAliases.size() + 1);
        all.add(envName());
        all.addAll(envAliases);
        return all;
    }

    /** What the option accepts, for messages and {@code --help}. */
    public String accepts() {
        return switch (type) {
            case INT -> "an integer from " + min + " to " + max;
            case BOOL -> "true or false";
            case TEXT -> "text";
            case LIST -> "text; repeat the flag for several (in the environment: comma- or newline-separated)";
            case JSON -> "a JSON array or object";
            case CHOICE -> "one of " + String.join(", ", choices);
        };
    }

    /**
     * What is wrong with {@code value} for this option, as the end of a sentence that starts with
     * where the value came from ("option --port is 'x' but must be ..."), or null when it is good.
     */
    public String problem(String value) {
        String typeProblem = switch (type) {
            case INT -> {
                int n;
                try {
                    n = Integer.parseInt(value.strip());
                } catch (NumberFormatException e) {
                    yield "is '" + value + "' but must be " + accepts();
                }
                yield n < min || n > max ? "is " + n + " but must be " + accepts() : null;
            }
            case BOOL -> value.equals("true") || value.equals("false") ? null
                    : "is '" + value + "' but must be " + accepts();
            case CHOICE -> choices.contains(value.strip().toLowerCase(Locale.ROOT)) ? null
                    : "is '" + value + "' but must be " + accepts();
            case TEXT, LIST -> value.isBlank() && !defaultValue.isEmpty() ? "must not be empty" : null;
            case JSON -> {
                try {
                    var node = Json.MAPPER.readTree(value);
                    yield node != null && node.isContainerNode() ? null : "must be " + accepts();
                } catch (JsonProcessingException e) {
                    yield "is not valid JSON: " + e.getOriginalMessage().lines().findFirst().orElse("");
                }
            }
        };
        if (typeProblem != null || check == null || value.isEmpty()) {
            return typeProblem;
        }
        return check.problem(value);
    }

    /** Whether two plugins declaring this name mean the same option (same type, default and limits). */
    public boolean sameAs(OptionSpec other) {
        return name.equals(other.name) && type == other.type && defaultValue.equals(other.defaultValue)
                && min == other.min && max == other.max && choices.equals(other.choices);
    }
}
