package dev.switchboard.store.postgres;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PostgresUrlTest {
    @Test
    void theUriFormGivesTheCredentialsApartFromTheJdbcUrl() {
        PostgresUrl url = PostgresUrl.parse("postgresql://app:p%40ss%3Aw0rd@db.internal:6543/history?sslmode=require");

        assertThat(url.jdbcUrl()).isEqualTo("jdbc:postgresql://db.internal:6543/history?sslmode=require");
        assertThat(url.user()).isEqualTo("app");
        assertThat(url.password()).isEqualTo("p@ss:w0rd");
        assertThat(url).hasToString("db.internal:6543/history");
    }

    @Test
    void theJdbcFormTakesTheCredentialsOutOfItsParameters() {
        PostgresUrl url = PostgresUrl.parse(
                "jdbc:postgresql://10.0.0.5:5432/history?user=app&ssl=true&password=pa%26ss&currentSchema=sb");

        assertThat(url.jdbcUrl()).isEqualTo("jdbc:postgresql://10.0.0.5:5432/history?ssl=true&currentSchema=sb");
        assertThat(url.user()).isEqualTo("app");
        assertThat(url.password()).isEqualTo("pa&ss");
    }

    @Test
    void thePortDefaultsToPostgresqlsAndTheUserAndPasswordMayBeLeftToTheDriver() {
        PostgresUrl url = PostgresUrl.parse("postgres://localhost/history");

        assertThat(url.jdbcUrl()).isEqualTo("jdbc:postgresql://localhost:5432/history");
        assertThat(url.user()).isNull();
        assertThat(url.password()).isNull();
        assertThat(PostgresUrl.parse("postgresql://app@[::1]:5433/h").jdbcUrl())
                .isEqualTo("jdbc:postgresql://[::1]:5433/h");
    }

    @Test
    void anythingElseIsAProblemThatGivesTheFormsAndNeverThePassword() {
        for (String bad : new String[] {"mysql://app:hunter22@db:3306/history", "postgresql://app:hunter22@db:5432",
                "jdbc:postgresql://app:hunter22@db:5432/history", "db:5432/history", "postgresql://app:hunter22@db:99999/h"}) {
            assertThat(PostgresUrl.problem(bad)).as(bad).isNotNull().doesNotContain("hunter22");
        }
        assertThat(PostgresUrl.problem("mysql://db/history")).contains(PostgresUrl.FORMS);
        assertThat(PostgresUrl.problem("postgresql://db:99999/h")).contains("port 99999");
        assertThat(PostgresUrl.problem("postgresql://db:5432/h")).isNull();
        assertThatThrownBy(() -> PostgresUrl.parse("postgresql://app:100%zz@db/h")).hasMessageContaining("%-escape")
                .hasMessageNotContaining("100%zz");
    }
}
