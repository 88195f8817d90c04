package dev.switchboard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.switchboard.core.Json;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ScriptedModelTest {
    private static final String REQUEST = "{\"model\":\"scripted\",\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";

    private static HttpResponse<String> ask(ScriptedModel model, String body) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return http.send(HttpRequest.newBuilder(URI.create(model.baseUrl() + "/chat/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void streamsARoleChunkOneChunkPerTokenStampedWithItsSendTimeThenUsageAndDone() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(200)) {
            long before = ScriptedModel.now();
            HttpResponse<String> res = ask(model, REQUEST);
            long after = ScriptedModel.now();

            assertThat(res.statusCode()).isEqualTo(200);
            assertThat(res.headers().firstValue("Content-Type")).hasValue("text/event-stream");
            List<String> data = new ArrayList<>();
            for (String event : res.body().split("\n\n")) {
                assertThat(event).startsWith("data: ");
                data.add(event.substring("data: ".length()));
            }
            assertThat(data).hasSize(1 + 200 + 3);

            JsonNode role = Json.MAPPER.readTree(data.get(0));
            assertThat(role.path("object").asText()).isEqualTo("chat.completion.chunk");
            assertThat(role.path("model").asText()).isEqualTo(ScriptedModel.MODEL);
            assertThat(role.at("/choices/0/delta/role").asText()).isEqualTo("assistant");

            long previous = before;
            for (int i = 1; i <= 200; i++) {
                JsonNode chunk = Json.MAPPER.readTree(data.get(i));
                assertThat(chunk.at("/choices/0/index").asInt(-1)).isZero();
                assertThat(chunk.at("/choices/0/finish_reason").isNull()).isTrue();
                String token = chunk.at("/choices/0/delta/content").asText();
                long sent = ScriptedModel.sentAt(token, 0);
                assertThat(sent).as("token %d: %s", i, token).isBetween(previous, after);
                previous = sent;
            }

            JsonNode finish = Json.MAPPER.readTree(data.get(201));
            assertThat(finish.at("/choices/0/finish_reason").asText()).isEqualTo("stop");
            JsonNode usage = Json.MAPPER.readTree(data.get(202));
            assertThat(usage.path("choices").size()).isZero();
            assertThat(usage.at("/usage/completion_tokens").asInt()).isEqualTo(200);
            assertThat(usage.at("/usage/total_tokens").asInt())
                    .isEqualTo(usage.at("/usage/prompt_tokens").asInt() + 200);
            assertThat(data.get(203)).isEqualTo("[DONE]");
        }
    }

    /** One request on a raw connection; its whole response, read up to the chunked body's end. */
    private static String exchange(Socket socket) throws IOException {
        byte[] body = REQUEST.getBytes(StandardCharsets.UTF_8);
        OutputStream out = socket.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        InputStream in = socket.getInputStream();
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        while (!read.toString(StandardCharsets.US_ASCII).endsWith("\r\n0\r\n\r\n")) {
            int b = in.read();
            assertThat(b).as("the response ended early: %s", read).isNotNegative();
            read.write(b);
        }
        return read.toString(StandardCharsets.US_ASCII);
    }

    @Test
    void closesEachAnswersConnectionOnlyWhileToldTo() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(3)) {
            try (Socket socket = new Socket("127.0.0.1", model.port())) {
                socket.setSoTimeout(10_000);
                assertThat(exchange(socket)).startsWith("HTTP/1.1 200").doesNotContainIgnoringCase("connection: close");
                // Kept alive: the same connection answers again.
                assertThat(exchange(socket)).startsWith("HTTP/1.1 200");
            }

            model.closeAfterEachAnswer(true);
            try (Socket socket = new Socket("127.0.0.1", model.port())) {
                socket.setSoTimeout(10_000);
                assertThat(exchange(socket)).startsWith("HTTP/1.1 200").containsIgnoringCase("connection: close");
                assertThat(socket.getInputStream().read()).as("the server closed the connection").isEqualTo(-1);
            }

            model.closeAfterEachAnswer(false);
            try (Socket socket = new Socket("127.0.0.1", model.port())) {
                socket.setSoTimeout(10_000);
                exchange(socket);
                assertThat(exchange(socket)).startsWith("HTTP/1.1 200");
            }
        }
    }

    @Test
    void pacedTokensComeAtTheSetRate() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(200)) {
            model.script(11, 100);
            long before = System.nanoTime();
            HttpResponse<String> res = ask(model, REQUEST);
            double millis = (System.nanoTime() - before) / 1e6;

            assertThat(res.body().split("\n\n")).hasSize(1 + 11 + 3);
            // Ten gaps of 10 ms between eleven tokens, the first at once.
            assertThat(millis).isBetween(100.0, 1000.0);
        }
    }

    @Test
    void aRequestThatDoesNotAskForAStreamIsRefused() throws Exception {
        try (ScriptedModel model = ScriptedModel.start(5)) {
            HttpResponse<String> res = ask(model, REQUEST.replace("\"stream\":true", "\"stream\":false"));

            assertThat(res.statusCode()).isEqualTo(400);
            assertThat(Json.MAPPER.readTree(res.body()).at("/error/message").asText()).isNotEmpty();
        }
    }

    @Test
    void onlyDigitsEndedByASpaceAreASendTime() {
        assertThat(ScriptedModel.sentAt("12345 ", 0)).isEqualTo(12345);
        assertThat(ScriptedModel.sentAt("\"content\":\"42 \"", 11)).isEqualTo(42);
        assertThat(ScriptedModel.sentAt("", 0)).isEqualTo(-1);
        assertThat(ScriptedModel.sentAt("token ", 0)).isEqualTo(-1);
        assertThat(ScriptedModel.sentAt("12345", 0)).isEqualTo(-1);
    }
}
