package dev.switchboard.runtime.agui;

import dev.switchboard.core.spi.Settings;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** The {@code agui} runtime's options, checked once at start-up. */
record AguiUpstreamConfig(URI url, List<Header> headers, boolean forwardToken, Duration timeout) {

    /** A header sent with every request upstream. */
    record Header(String name, String value) {
        @Override
        public String toString() {
            return name + ": ***";
        }
    }

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    /** Headers the JDK client sets itself and refuses to take. */
    private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade");

    /**
     * Reads and checks the options; an {@link IllegalArgumentException} names the option that is
     * missing or wrong and what it accepts.
     */
    static AguiUpstreamConfig from(Settings settings) {
        String text = settings.get("agui-upstream-url").map(String::strip).filter(s -> !s.isEmpty()).orElseThrow(() ->
                new IllegalArgumentException("option --agui-upstream-url is required: the URL an AG-UI agent serves "
                        + "runs on, such as http://127.0.0.1:8000/agui"));
        URI url = httpUrl(text);
        if (url == null) {
            throw new IllegalArgumentException("option --agui-upstream-url is '" + text
                    + "' but must be an http or https URL, such as http://127.0.0.1:8000/agui");
        }
        List<Header> headers = new ArrayList<>();
        for (String line : settings.getAll("agui-upstream-header")) {
            int colon = line.indexOf(':');
            String name = colon < 0 ? "" : line.substring(0, colon).strip();
            if (!TOKEN.matcher(name).matches()) {
                throw new IllegalArgumentException("option --agui-upstream-header is '" + shown(line)
                        + "' but must be 'Name: value', such as 'Authorization: Bearer …'");
            }
            if (RESTRICTED.contains(name.toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("option --agui-upstream-header cannot set " + name
                        + ", which the gateway sets itself");
            }
            headers.add(new Header(name, line.substring(colon + 1).strip()));
        }
        String forward = settings.get("agui-forward-token").orElse("false").strip();
        if (!forward.equals("true") && !forward.equals("false")) {
            throw new IllegalArgumentException("option --agui-forward-token is '" + forward + "' but must be true or false");
        }
        return new AguiUpstreamConfig(url, List.copyOf(headers), forward.equals("true"),
                Duration.ofSeconds(seconds(settings.get("upstream-timeout-seconds"))));
    }

    /**
     * The text with what the agent is sent that may be secret blanked out: the extra headers' values
     * and {@code token} (the client's, when it is forwarded; may be null). An agent's error may quote them.
     */
    String redact(String text, String token) {
        String out = text;
        for (Header h : headers) {
            out = blank(out, h.value());
        }
        return blank(out, token);
    }

    private static String blank(String text, String secret) {
        return secret == null || secret.length() < 4 || text == null ? text : text.replace(secret, "***");
    }

    /** A header line shown in an error: its name only, as its value may be a secret. */
    private static String shown(String line) {
        int colon = line.indexOf(':');
        return colon < 0 ? (line.length() > 40 ? line.substring(0, 40) + "…" : line) : line.substring(0, colon) + ": …";
    }

    private static int seconds(Optional<String> value) {
        if (value.isEmpty()) {
            return 60;
        }
        try {
            int n = Integer.parseInt(value.get().strip());
            if (n >= 1 && n <= 3_600) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("option --upstream-timeout-seconds is '" + value.get()
                + "' but must be an integer from 1 to 3600");
    }

    private static URI httpUrl(String text) {
        try {
            URI uri = new URI(text);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            return (scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null ? uri : null;
        } catch (URISyntaxException e) {
            return null;
        }
    }
}
