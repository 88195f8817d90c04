package dev.switchboard.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.CharsetUtil;

import java.net.InetSocketAddress;

/**
 * The floor: a minimal Netty WebSocket server that answers every {@code benchmark <n>} request
 * with the frames the gateway would send for it, encoded once in advance, stamped with the time
 * of sending, written while the channel is writable, as fast as the machine allows. It has the
 * gateway's transport set-up (NIO, the same thread counts, TCP_NODELAY, backlog, frame limit) and
 * none of its logic: no hub, store, runtime or encoder on the way.
 *
 * <p>Run as {@code java -cp switchboard-bench.jar dev.switchboard.bench.FloorServer --port P
 * [--dialect agui-ws|hai-ws] [--chunk TEXT]}; it serves any path.
 */
public final class FloorServer {
    private FloorServer() {
    }

    public static void main(String[] args) throws Exception {
        int port = 0;
        Dialect dialect = Dialect.AGUI_WS;
        String chunk = LoadPlan.CHUNK_TEXT;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--dialect" -> dialect = Dialect.of(args[++i]);
                case "--chunk" -> chunk = args[++i];
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; options: --port P, --dialect agui-ws|hai-ws, --chunk TEXT");
            }
        }
        FloorFrames frames = FloorFrames.of(dialect, chunk);
        Channel server = start(port, frames);
        System.out.println("floor serving " + dialect.id + " on port "
                + ((InetSocketAddress) server.localAddress()).getPort());
        server.closeFuture().sync();
    }

    /** Binds the floor on loopback; returns the server channel. */
    public static Channel start(int port, FloorFrames frames) throws InterruptedException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
        WebSocketServerProtocolConfig ws = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath("/")
                .checkStartsWith(true)
                .allowExtensions(false)
                .maxFramePayloadLength(65536)
                .build();
        Channel ch = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65536),
                                new WebSocketServerProtocolHandler(ws), new Streamer(frames));
                    }
                })
                .bind("127.0.0.1", port).sync().channel();
        ch.closeFuture().addListener(f -> {
            boss.shutdownGracefully();
            workers.shutdownGracefully();
        });
        return ch;
    }

    /** One connection: streams a run's frames for each request, one run at a time. */
    private static final class Streamer extends SimpleChannelInboundHandler<TextWebSocketFrame> {
        private static final byte[] BENCHMARK = "benchmark ".getBytes(CharsetUtil.US_ASCII);

        private final FloorFrames frames;
        private final int[] headStamps;
        private final int chunkStamp;
        private final int[] tailStamps;
        private ChannelHandlerContext ctx;
        /** Index of the next frame of the current run, and how many it has; none when equal. */
        private int next;
        private int total;
        private int chunks;

        Streamer(FloorFrames frames) {
            this.frames = frames;
            this.headStamps = frames.head.stream().mapToInt(FloorFrames::stampOffset).toArray();
            this.chunkStamp = FloorFrames.stampOffset(frames.chunk);
            this.tailStamps = frames.tail.stream().mapToInt(FloorFrames::stampOffset).toArray();
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, TextWebSocketFrame frame) {
            ByteBuf text = frame.content();
            int at = Bytes.indexOf(text, text.readerIndex(), text.writerIndex(), BENCHMARK);
            long n = at < 0 ? -1 : Bytes.readLong(text, at + BENCHMARK.length, text.writerIndex());
            if (n < 1 || n > 100_000 || next < total) {
                return;
            }
            chunks = (int) n;
            next = 0;
            total = frames.frames(chunks);
            pump();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                pump();
            }
            ctx.fireChannelWritabilityChanged();
        }

        /** Writes the run's frames while the channel takes them, then flushes. */
        private void pump() {
            boolean wrote = false;
            while (next < total && ctx.channel().isWritable()) {
                int head = frames.head.size();
                if (next < head) {
                    write(frames.head.get(next), headStamps[next]);
                } else if (next < head + chunks) {
                    write(frames.chunk, chunkStamp);
                } else {
                    int t = next - head - chunks;
                    write(frames.tail.get(t), tailStamps[t]);
                }
                next++;
                wrote = true;
            }
            if (wrote) {
                ctx.flush();
            }
        }

        private void write(byte[] template, int stampAt) {
            ByteBuf buf = ctx.alloc().buffer(template.length).writeBytes(template);
            if (stampAt >= 0) {
                Bytes.writeDigits(buf, buf.readerIndex() + stampAt, System.currentTimeMillis(), 13);
            }
            ctx.write(new TextWebSocketFrame(buf), ctx.voidPromise());
        }
    }
}
