package dev.switchboard.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on 127.0.0.1 in front of one server, for a test that cuts a process off from it
 * without closing its connections: once {@link #freeze}d, the proxy reads and drops every byte, in
 * both directions, so the process's requests go unanswered as over a network that stopped.
 */
final class FreezableProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean frozen;
    private volatile boolean closed;

    private FreezableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "proxy-accept-" + port());
        accept.setDaemon(true);
        accept.start();
    }

    /** A proxy to {@code 127.0.0.1:targetPort}, forwarding until frozen. */
    static FreezableProxy to(int targetPort) throws IOException {
        return new FreezableProxy(targetPort);
    }

    int port() {
        return listener.getLocalPort();
    }

    /** From now on nothing passes, either way; connections stay open. */
    void freeze() {
        frozen = true;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                if (!closed) {
                    throw new IllegalStateException("the proxy stopped accepting", e);
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (!frozen) {
                        out.write(buf, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException closedUnderUs) {
                // One side went away: the other follows.
            } finally {
                closeQuietly(to);
                closeQuietly(from);
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // Closing is all that is left to do.
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        sockets.forEach(FreezableProxy::closeQuietly);
    }
}
