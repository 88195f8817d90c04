package dev.switchboard.store.postgres;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the store's database is, read from {@code --store-url}: a JDBC URL without credentials,
 * and the user and password apart from it, so that nothing that names the database carries the
 * password. {@link #toString()} is {@code host:port/db}.
 */
record PostgresUrl(String host, int port, String database, String parameters, String user, String password) {
    /** The forms {@code --store-url} accepts, for messages and help. */
    static final String FORMS = "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?PARAMS]"
            + " or jdbc:postgresql://HOST[:PORT]/DB?user=USER&password=PASSWORD[&PARAMS]";

    private static final int DEFAULT_PORT = 5432;
    private static final Pattern URI_FORM = Pattern.compile(
            "postgres(?:ql)?://(?:([^:@/?]*)(?::([^@/?]*))?@)?([^:/?@]+|\\[[0-9A-Fa-f:.]+])(?::(\\d{1,5}))?/([^/?]+)(?:\\?(.*))?");
    private static final Pattern JDBC_FORM = Pattern.compile(
            "jdbc:postgresql://([^:/?@]+|\\[[0-9A-Fa-f:.]+])(?::(\\d{1,5}))?/([^/?]+)(?:\\?(.*))?");

    /** The URL, or an {@link IllegalArgumentException} saying what is wrong without repeating the password. */
    static PostgresUrl parse(String text) {
        String value = text.strip();
        Matcher uri = URI_FORM.matcher(value);
        if (uri.matches()) {
            Query query = Query.of(uri.group(6));
            return new PostgresUrl(uri.group(3), port(uri.group(4)), decode(uri.group(5)), query.rest(),
                    uri.group(1) == null ? query.user() : decode(uri.group(1)),
                    uri.group(2) == null ? query.password() : decode(uri.group(2)));
        }
        Matcher jdbc = JDBC_FORM.matcher(value);
        if (jdbc.matches()) {
            Query query = Query.of(jdbc.group(4));
            return new PostgresUrl(jdbc.group(1), port(jdbc.group(2)), decode(jdbc.group(3)), query.rest(),
                    query.user(), query.password());
        }
        throw new IllegalArgumentException("is not a PostgreSQL URL; it must be " + FORMS);
    }

    /** What is wrong with {@code text} as a {@code --store-url} value, or null: an {@code OptionSpec} check. */
    static String problem(String text) {
        try {
            parse(text);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private static int port(String digits) {
        if (digits == null) {
            return DEFAULT_PORT;
        }
        int port = Integer.parseInt(digits);
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("has port " + port + ", which must be from 1 to 65535");
        }
        return port;
    }

    private static String decode(String part) {
        try {
            return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("has a malformed %-escape; it must be " + FORMS);
        }
    }

    /** The JDBC URL the driver connects to: no user, no password. */
    String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database + (parameters.isEmpty() ? "" : "?" + parameters);
    }

    @Override
    public String toString() {
        return host + ":" + port + "/" + database;
    }

    /** The query of a URL, with the credentials taken out of the parameters passed on to the driver. */
    private record Query(String user, String password, String rest) {
        static Query of(String query) {
            String user = null;
            String password = null;
            List<String> rest = new ArrayList<>();
            for (String pair : query == null || query.isEmpty() ? new String[0] : query.split("&")) {
                int eq = pair.indexOf('=');
                String name = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                switch (name) {
                    case "user" -> user = value;
                    case "password" -> password = value;
                    default -> rest.add(pair);
                }
            }
            return new Query(user, password, String.join("&", rest));
        }
    }
}
