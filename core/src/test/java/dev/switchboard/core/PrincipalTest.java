package dev.switchboard.core;

import dev.switchboard.core.spi.Authenticator;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PrincipalTest {
    @Test
    void theCredentialIsNotPartOfWhoThePrincipalIs() {
        assertThat(Principal.of("alice", "token-1")).isEqualTo(Principal.of("alice"))
                .hasSameHashCodeAs(Principal.of("alice", "token-2"));
    }

    @Test
    void theCredentialIsNeverShown() {
        assertThat(Principal.of("alice", "secret-token").toString()).doesNotContain("secret-token").contains("alice");
    }

    @Test
    void withAuthenticationOffAPresentedTokenIsKeptAsTheAnonymousPrincipalsCredential() {
        Authenticator.Result r = Authenticator.anonymous().authenticate("client-token");

        Principal p = ((Authenticator.Result.Accepted) r).principal();
        assertThat(p).isEqualTo(Principal.ANONYMOUS);
        assertThat(p.anonymous()).isTrue();
        assertThat(p.credential()).isEqualTo("client-token");
        assertThat(((Authenticator.Result.Accepted) Authenticator.anonymous().authenticate(null)).principal().credential())
                .isNull();
    }
}
