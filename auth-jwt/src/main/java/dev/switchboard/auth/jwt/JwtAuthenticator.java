package dev.switchboard.auth.jwt;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.switchboard.core.Principal;
import dev.switchboard.core.spi.Authenticator;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;

/**
 * Verifies JSON Web Tokens signed with HS256 (a shared secret) or RS256 (an RSA public key),
 * with Nimbus JOSE+JWT: the signature, {@code exp} and {@code nbf} (within a clock skew), and a
 * non-empty {@code sub}, which becomes the principal.
 */
public final class JwtAuthenticator implements Authenticator {
    /** HS256 keys shorter than this are refused: RFC 7518 §3.2 asks for at least the hash size. */
    public static final int MIN_SECRET_BYTES = 32;

    private final JWSAlgorithm algorithm;
    private final JWSVerifier verifier;
    private final Duration skew;
    private final Clock clock;

    private JwtAuthenticator(JWSAlgorithm algorithm, JWSVerifier verifier, Duration skew, Clock clock) {
        this.algorithm = algorithm;
        this.verifier = verifier;
        this.skew = skew;
        this.clock = clock;
    }

    /** HS256 with a shared secret of at least {@link #MIN_SECRET_BYTES} bytes (UTF-8). */
    public static JwtAuthenticator hs256(String secret, Duration skew, Clock clock) {
        byte[] key = secret.getBytes(StandardCharsets.UTF_8);
        if (key.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("an HS256 secret must be at least " + MIN_SECRET_BYTES
                    + " bytes long; the one given has " + key.length);
        }
        try {
            return new JwtAuthenticator(JWSAlgorithm.HS256, new MACVerifier(key), skew, clock);
        } catch (JOSEException e) {
            throw new IllegalArgumentException("unusable HS256 secret: " + e.getMessage(), e);
        }
    }

    /** RS256 with an RSA public key in PEM ({@code -----BEGIN PUBLIC KEY-----}). */
    public static JwtAuthenticator rs256(String pem, Duration skew, Clock clock) {
        return new JwtAuthenticator(JWSAlgorithm.RS256, new RSASSAVerifier(parsePublicKey(pem)), skew, clock);
    }

    static RSAPublicKey parsePublicKey(String pem) {
        String begin = "-----BEGIN PUBLIC KEY-----";
        String end = "-----END PUBLIC KEY-----";
        int from = pem.indexOf(begin);
        int to = pem.indexOf(end);
        if (from < 0 || to < from) {
            throw new IllegalArgumentException("expected a PEM public key between '" + begin + "' and '" + end + "'");
        }
        String body = pem.substring(from + begin.length(), to).replaceAll("\\s", "");
        try {
            byte[] der = Base64.getDecoder().decode(body);
            return (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
        } catch (IllegalArgumentException | GeneralSecurityException | ClassCastException e) {
            throw new IllegalArgumentException("the PEM does not hold an RSA public key: " + e.getMessage(), e);
        }
    }

    @Override
    public boolean required() {
        return true;
    }

    @Override
    public Result authenticate(String token) {
        if (token == null || token.isBlank()) {
            return new Result.Refused("a bearer token is required");
        }
        SignedJWT jwt;
        JWTClaimsSet claims;
        try {
            jwt = SignedJWT.parse(token.strip());
            claims = jwt.getJWTClaimsSet();
        } catch (ParseException e) {
            return new Result.Refused("the token is not a signed JWT");
        }
        if (!algorithm.equals(jwt.getHeader().getAlgorithm())) {
            return new Result.Refused("the token must be signed with " + algorithm.getName());
        }
        try {
            if (!jwt.verify(verifier)) {
                return new Result.Refused("the token's signature is not valid");
            }
        } catch (JOSEException e) {
            return new Result.Refused("the token's signature cannot be checked");
        }
        Instant now = clock.instant();
        Date exp = claims.getExpirationTime();
        if (exp != null && now.isAfter(exp.toInstant().plus(skew))) {
            return new Result.Refused("the token has expired");
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && now.plus(skew).isBefore(nbf.toInstant())) {
            return new Result.Refused("the token is not valid yet");
        }
        String subject = claims.getSubject();
        if (subject == null || subject.isBlank()) {
            return new Result.Refused("the token has no subject (sub)");
        }
        return new Result.Accepted(Principal.of(subject, token.strip()));
    }
}
