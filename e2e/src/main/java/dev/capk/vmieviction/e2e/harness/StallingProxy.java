package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP endpoint that accepts every connection and never answers: a stalled API server
 * (hung process, black-holed load balancer). Clients connect at once and then wait for a TLS
 * handshake or a response that never comes, until their own timeouts fire.
 */
public final class StallingProxy implements AutoCloseable {
  private final ServerSocket server;
  private final List<Socket> held = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private final Thread acceptor;

  private StallingProxy(ServerSocket server) {
    this.server = server;
    this.acceptor = new Thread(this::acceptForever, "stalling-proxy-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Listens on 127.0.0.1, on a free port. */
  public static StallingProxy start() {
    try {
      ServerSocket s = new ServerSocket();
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
      return new StallingProxy(s);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on a loopback port", e);
    }
  }

  private void acceptForever() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        // Held open, never read nor written: the peer's bytes sit in the socket buffer.
        held.add(s);
        accepted.incrementAndGet();
      } catch (IOException e) {
        if (server.isClosed()) {
          return;
        }
      }
    }
  }

  public int port() {
    return server.getLocalPort();
  }

  /** {@code https://127.0.0.1:<port>}: a server URL for a kubeconfig. */
  public String url() {
    return "https://127.0.0.1:" + port();
  }

  /** Connections accepted so far (each one a client left waiting). */
  public int acceptedConnections() {
    return accepted.get();
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    for (Socket s : held) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    held.clear();
  }
}
