package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on 127.0.0.1 in front of a real API server: it forwards the TLS bytes both ways, and
 * once {@linkplain #arm() armed} it passes the server's bytes on one at a time, one every {@code
 * interval}. Each read of the client then succeeds within any read timeout, yet a whole answer (or
 * handshake) takes hours: only a total call bound ends such a request. The slow cousin of {@link
 * StallingProxy}, which never answers at all.
 */
public final class TricklingProxy implements AutoCloseable {
  private final ServerSocket server;
  private final InetSocketAddress upstream;
  private final Duration interval;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile boolean armed;

  private TricklingProxy(ServerSocket server, InetSocketAddress upstream, Duration interval) {
    this.server = server;
    this.upstream = upstream;
    this.interval = interval;
    daemon("trickling-proxy-accept", this::acceptForever).start();
  }

  /** Listens on 127.0.0.1, on a free port, forwarding to {@code upstreamPort} on 127.0.0.1. */
  public static TricklingProxy start(int upstreamPort, Duration interval) {
    try {
      ServerSocket s = new ServerSocket();
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
      return new TricklingProxy(
          s, new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort), interval);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on a loopback port", e);
    }
  }

  /** From now on the server's bytes trickle, on every connection. */
  public void arm() {
    armed = true;
  }

  /**
   * {@code https://127.0.0.1:<port>}: a server URL for a kubeconfig (the server's certificate names
   * 127.0.0.1).
   */
  public String url() {
    return "https://127.0.0.1:" + server.getLocalPort();
  }

  /** Connections accepted so far. */
  public int acceptedConnections() {
    return accepted.get();
  }

  private void acceptForever() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        accepted.incrementAndGet();
        Socket target = new Socket();
        sockets.add(client);
        sockets.add(target);
        target.connect(upstream, 5_000);
        daemon("trickling-proxy-up", () -> pump(client, target, false)).start();
        daemon("trickling-proxy-down", () -> pump(target, client, true)).start();
      } catch (IOException e) {
        if (server.isClosed()) {
          return;
        }
      }
    }
  }

  /**
   * Copies {@code from} to {@code to}; the server's side ({@code fromServer}) trickles once armed.
   */
  private void pump(Socket from, Socket to, boolean fromServer) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        if (fromServer && armed) {
          for (int i = 0; i < n; i++) {
            out.write(buffer[i]);
            out.flush();
            Thread.sleep(interval.toMillis());
          }
        } else {
          out.write(buffer, 0, n);
          out.flush();
        }
      }
    } catch (IOException | InterruptedException e) {
      // The other side went away, or the proxy is closing.
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  @Override
  public void close() {
    closeQuietly(server);
    sockets.forEach(TricklingProxy::closeQuietly);
    sockets.clear();
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing anyway
    }
  }

  private static Thread daemon(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
