package dev.switchboard.core;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class UpstreamHttpTest {
    /** Records what a stream tells its listener. */
    private static final class Recorder implements UpstreamHttp.SseListener {
        final List<UpstreamHttp.Sse> events = new ArrayList<>();
        boolean ended;
        Throwable error;

        @Override
        public void onEvent(UpstreamHttp.Sse event) {
            events.add(event);
        }

        @Override
        public void onEnd() {
            ended = true;
        }

        @Override
        public void onError(Throwable error) {
            this.error = error;
        }
    }

    /** A subscription that counts requests and cancels. */
    private static final class Subscription implements Flow.Subscription {
        long requested;
        boolean cancelled;

        @Override
        public void request(long n) {
            requested += n;
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }

    private static List<ByteBuffer> bytes(String s) {
        return List.of(ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aUrlIsShownWithoutItsUserInfoAndQuery() {
        assertThat(UpstreamHttp.shown(URI.create("http://127.0.0.1:8000/agui"))).isEqualTo("http://127.0.0.1:8000/agui");
        assertThat(UpstreamHttp.shown(URI.create("https://user:pw@agent.example/run?key=s3cret&x=1")))
                .isEqualTo("https://agent.example/run?…");
    }

    @Test
    void dataLinesJoinAndABlankLineDispatches() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        s.onSubscribe(new Subscription());

        s.onNext(bytes(": keep-alive\nevent: delta\ndata: {\"a\":\ndata:1}\nid: 7\n"));
        assertThat(r.events).isEmpty();
        s.onNext(bytes("\n\n"));
        assertThat(r.events).containsExactly(new UpstreamHttp.Sse("delta", "{\"a\":\n1}"));
        s.onNext(bytes("data\n\ndata:  two spaces"));
        s.onComplete();

        assertThat(r.events).containsExactly(new UpstreamHttp.Sse("delta", "{\"a\":\n1}"),
                new UpstreamHttp.Sse("message", ""), new UpstreamHttp.Sse("message", " two spaces"));
        assertThat(r.ended).isTrue();
    }

    @Test
    void anEventIsReadFromItsBytesDuringTheCallThatGetsIt() throws Exception {
        UpstreamHttp.SseLines lines = new UpstreamHttp.SseLines();
        List<String> seen = new ArrayList<>();
        byte[] stream = "event: x\ndata: [DONE]\n\ndata: ü\ndata: 1\n\ndata: [DONE]!\n\n".getBytes(StandardCharsets.UTF_8);

        lines.take(ByteBuffer.wrap(stream), e -> {
            byte[] copy = new byte[e.length()];
            e.copy(0, copy, 0, e.length());
            seen.add(e.event() + " " + e.is("[DONE]") + " " + e.text() + " " + e.length() + " " + e.byteAt(0)
                    + " " + new String(copy, StandardCharsets.UTF_8));
        }, () -> true);

        assertThat(seen).containsExactly("x true [DONE] 6 91 [DONE]", "message false ü\n1 4 -61 ü\n1",
                "message false [DONE]! 7 91 [DONE]!");
    }

    @Test
    void anEventsDataLongerThanTheLimitIsAnErrorThoughEachLineIsShorter() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        s.onSubscribe(new Subscription());
        byte[] line = ("data: " + "z".repeat(1 << 20) + "\n").getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i <= UpstreamHttp.MAX_LINE_BYTES / (1 << 20) && r.error == null; i++) {
            s.onNext(List.of(ByteBuffer.wrap(line)));
        }

        assertThat(r.error).hasMessageContaining("data is longer than " + UpstreamHttp.MAX_LINE_BYTES);
        assertThat(r.events).isEmpty();
    }

    @Test
    void linesEndAtLfCrOrCrlfEvenWhenSplitAcrossBuffers() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        Subscription sub = new Subscription();
        s.onSubscribe(sub);

        s.onNext(bytes("data: a\r"));
        s.onNext(bytes("\n\r\ndata: b\r\rdata: ünï"));
        s.onNext(List.of(ByteBuffer.wrap(new byte[] {(byte) 0xc3}), ByteBuffer.wrap(new byte[] {(byte) 0xa9})));
        s.onNext(bytes("\n\ndata: [DONE]"));
        s.onComplete();

        assertThat(r.events).extracting(UpstreamHttp.Sse::data).containsExactly("a", "b", "ünïé", "[DONE]");
        assertThat(r.ended).isTrue();
        assertThat(sub.requested).isEqualTo(5);
    }

    @Test
    void aBufferIsReadFromItsPositionAndALongLineGrowsAcrossBuffers() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        s.onSubscribe(new Subscription());
        ByteBuffer offset = ByteBuffer.wrap("xxdata: ".getBytes(StandardCharsets.UTF_8));
        offset.position(2);
        s.onNext(List.of(offset));
        String longText = "y".repeat(5_000);
        for (int i = 0; i < longText.length(); i += 700) {
            s.onNext(bytes(longText.substring(i, Math.min(longText.length(), i + 700))));
        }
        s.onNext(bytes("\n\n"));

        assertThat(r.events).extracting(UpstreamHttp.Sse::data).containsExactly(longText);
    }

    @Test
    void aLineLongerThanTheLimitIsAnError() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        Subscription sub = new Subscription();
        s.onSubscribe(sub);
        byte[] chunk = new byte[1 << 20];
        java.util.Arrays.fill(chunk, (byte) 'z');
        for (int i = 0; i <= UpstreamHttp.MAX_LINE_BYTES / chunk.length && r.error == null; i++) {
            s.onNext(List.of(ByteBuffer.wrap(chunk)));
        }

        assertThat(r.error).hasMessageContaining("longer than " + UpstreamHttp.MAX_LINE_BYTES);
        assertThat(r.events).isEmpty();
    }

    @Test
    void cancellingStopsTheBodyAndTheListenerHearsNothingMore() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        Subscription sub = new Subscription();
        s.onSubscribe(sub);

        s.cancel();
        s.onNext(bytes("data: late\n\n"));
        s.onError(new IOException("closed"));
        s.onComplete();

        assertThat(sub.cancelled).isTrue();
        assertThat(r.events).isEmpty();
        assertThat(r.ended).isFalse();
        assertThat(r.error).isNull();
        assertThat(s.getBody().toCompletableFuture()).isCompleted();
    }

    @Test
    void aBrokenConnectionIsAnErrorAfterTheEventsBeforeIt() {
        Recorder r = new Recorder();
        UpstreamHttp.SseSubscriber s = UpstreamHttp.sse(r);
        s.onSubscribe(new Subscription());

        s.onNext(bytes("data: 1\n\ndata: 2"));
        s.onError(new IOException("reset"));

        assertThat(r.events).extracting(UpstreamHttp.Sse::data).containsExactly("1");
        assertThat(r.error).hasMessage("reset");
        assertThat(r.ended).isFalse();
    }

    @Test
    void aBoundedBodyIsCutAtItsLimitAndStopsReading() throws Exception {
        HttpResponse.BodySubscriber<String> body = UpstreamHttp.text(5);
        Subscription sub = new Subscription();
        body.onSubscribe(sub);

        body.onNext(bytes("abc"));
        body.onNext(bytes("defgh"));

        assertThat(sub.cancelled).isTrue();
        CompletableFuture<String> text = body.getBody().toCompletableFuture();
        assertThat(text.get(1, TimeUnit.SECONDS)).isEqualTo("abcde…");
    }

    @Test
    void aBoundedBodyWithinItsLimitIsWhole() throws Exception {
        HttpResponse.BodySubscriber<String> body = UpstreamHttp.text(5);
        body.onSubscribe(new Subscription());

        body.onNext(bytes("abcde"));
        body.onComplete();

        assertThat(body.getBody().toCompletableFuture().get(1, TimeUnit.SECONDS)).isEqualTo("abcde");
    }

    @Test
    void anAddressOrLocalhostNeedsNoLookupAndANameDoes() {
        assertThat(UpstreamHttp.needsNoLookup(URI.create("http://127.0.0.1:11434/v1/chat/completions"))).isTrue();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("https://10.1.2.3/v1/chat/completions"))).isTrue();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("http://[::1]:8000/v1/chat/completions"))).isTrue();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("http://LocalHost:8000/v1/chat/completions"))).isTrue();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("https://api.openai.com/v1/chat/completions"))).isFalse();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("http://localhost.example:8000/v1"))).isFalse();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("http://1.2.3.4.example/v1"))).isFalse();
        assertThat(UpstreamHttp.needsNoLookup(URI.create("http://model-server:8000/v1"))).isFalse();
    }
}
