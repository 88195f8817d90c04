package dev.switchboard.bench;

import dev.switchboard.core.Event;
import dev.switchboard.core.spi.DialectSession;
import dev.switchboard.server.internal.NettyFrameWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BufferFrameWriterTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void writesTheSameFramesAsTheGatewaysWriter(Dialect dialect) throws Exception {
        EmbeddedChannel channel = new EmbeddedChannel(new ChannelHandlerAdapter() {
        });
        List<byte[]> gatewayFrames = new ArrayList<>();
        NettyFrameWriter gateway = new NettyFrameWriter(channel.pipeline().firstContext(), dialect.framePrefix(),
                dialect.frameSuffix(), frame -> {
                    gatewayFrames.add(ByteBufUtil.getBytes(frame));
                    frame.release();
                });
        DialectSession viaGateway = dialect.newSession(dialect.adapter(), EventSamples.CONVERSATION);
        DialectSession viaBench = dialect.newSession(dialect.adapter(), EventSamples.CONVERSATION);
        try (BufferFrameWriter bench = BufferFrameWriter.keeping(dialect)) {
            long seq = EventSamples.prepare(viaGateway, dialect, Event.Kind.TEXT_DELTA, gateway);
            EventSamples.prepare(viaBench, dialect, Event.Kind.TEXT_DELTA, bench);
            // The frames before the deltas may carry ids each session makes up (AgentScope's response id).
            int gatewayBefore = gatewayFrames.size();
            int benchBefore = bench.kept().size();
            for (int i = 0; i < 3; i++) {
                viaGateway.encode(EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA), seq + i), gateway);
                viaBench.encode(EventSamples.envelope(EventSamples.sample(Event.Kind.TEXT_DELTA), seq + i), bench);
            }

            List<byte[]> deltas = gatewayFrames.subList(gatewayBefore, gatewayFrames.size());
            assertThat(deltas).hasSize(3);
            assertThat(bench.kept().subList(benchBefore, bench.kept().size())).containsExactlyElementsOf(deltas);
        } finally {
            channel.finishAndReleaseAll();
        }
    }
}
