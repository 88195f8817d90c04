package dev.switchboard.auth.jwt;

import dev.switchboard.core.spi.Authenticator;
import dev.switchboard.core.spi.AuthenticatorProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Provides JWT authentication: on when {@code --jwt-secret} (HS256) or {@code --jwt-public-key}
 * (RS256) is set, and then every client must present a signed token.
 */
public final class JwtAuthenticatorProvider implements AuthenticatorProvider {
    static final OptionSpec SECRET = OptionSpec.text("jwt-secret", "",
            "HS256 secret (at least " + JwtAuthenticator.MIN_SECRET_BYTES + " bytes): clients must present a signed JWT");
    static final OptionSpec PUBLIC_KEY = OptionSpec.text("jwt-public-key", "",
            "PEM file of an RSA public key: clients must present an RS256 JWT");
    static final OptionSpec CLOCK_SKEW = OptionSpec.integer("jwt-clock-skew-seconds", 60, 0, 3_600,
            "leeway for a token's exp and nbf");

    @Override
    public String id() {
        return "jwt";
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(SECRET, PUBLIC_KEY, CLOCK_SKEW);
    }

    @Override
    public Optional<Authenticator> create(Settings settings) {
        Duration skew = Duration.ofSeconds(settings.integer(CLOCK_SKEW.name(), 60));
        Optional<String> secret = settings.get(SECRET.name());
        Optional<String> publicKey = settings.get(PUBLIC_KEY.name());
        if (secret.isPresent() && publicKey.isPresent()) {
            throw new IllegalArgumentException("options --jwt-secret and --jwt-public-key are both set; set one");
        }
        if (secret.isPresent()) {
            try {
                return Optional.of(JwtAuthenticator.hs256(secret.get(), skew, Clock.systemUTC()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("option --jwt-secret: " + e.getMessage(), e);
            }
        }
        if (publicKey.isPresent()) {
            Path file = Path.of(publicKey.get());
            try {
                return Optional.of(JwtAuthenticator.rs256(Files.readString(file), skew, Clock.systemUTC()));
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalArgumentException("option --jwt-public-key names " + file + ": " + e.getMessage(), e);
            }
        }
        return Optional.empty();
    }
}
