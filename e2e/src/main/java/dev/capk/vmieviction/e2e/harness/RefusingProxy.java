package dev.capk.vmieviction.e2e.harness;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * An HTTPS proxy on 127.0.0.1 in front of a real API server, as API Priority and Fairness looks to
 * a client under load: every request whose request line (e.g. {@code GET
 * /apis/kubevirt.io/v1/kubevirts HTTP/1.1}) the predicate given to {@link #refuse} picks is
 * answered with the API server's own 429 Status; every other request, watches included, goes to the
 * server unchanged on the proxy's own TLS connection, with the client's headers (its bearer token).
 * It ends TLS with a certificate of its own authority ({@link #caCertificatePem()}), so the
 * client's kubeconfig names the proxy and that CA. HTTP/1.1 only (no ALPN is offered), which
 * clients fall back to.
 */
public final class RefusingProxy implements AutoCloseable {

  /** What kube-apiserver's API Priority and Fairness answers when a priority level is full. */
  static final String TOO_MANY_REQUESTS =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
          + "\"message\":\"Too many requests, please try again later.\","
          + "\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":1},\"code\":429}";

  private final ServerSocket server;
  private final Pki authority;
  private final InetSocketAddress upstream;
  private final SSLSocketFactory upstreamTls;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final List<String> refused = new CopyOnWriteArrayList<>();
  private final List<String> passed = new CopyOnWriteArrayList<>();
  private final List<Predicate<String>> refusing = new CopyOnWriteArrayList<>();

  private RefusingProxy(
      ServerSocket server,
      Pki authority,
      InetSocketAddress upstream,
      SSLSocketFactory upstreamTls) {
    this.server = server;
    this.authority = authority;
    this.upstream = upstream;
    this.upstreamTls = upstreamTls;
    daemon("refusing-proxy-accept", this::acceptForever).start();
  }

  /**
   * Listens on 127.0.0.1, on a free port, in front of {@code cluster}'s API server; refusing
   * nothing until told.
   */
  public static RefusingProxy start(KubeCluster cluster) {
    Pki authority = Pki.newAuthority("refusing-proxy-ca");
    try {
      ServerSocket s =
          Pki.serverContext(authority.serving("refusing-proxy", List.of()))
              .getServerSocketFactory()
              .createServerSocket();
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
      java.net.URI api = java.net.URI.create(cluster.serverUrl());
      return new RefusingProxy(
          s,
          authority,
          new InetSocketAddress(api.getHost(), api.getPort()),
          trusting(cluster.caCertificatePem()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on a loopback port", e);
    }
  }

  /** From now on the requests whose request line {@code lines} picks are answered with 429. */
  public void refuse(Predicate<String> lines) {
    refusing.add(lines);
  }

  /** From now on the requests {@code lines} picked go to the server (unless another refuses). */
  public void stopRefusing(Predicate<String> lines) {
    refusing.remove(lines);
  }

  /** Requests answered with 429 so far whose request line {@code lines} picks. */
  public long refused(Predicate<String> lines) {
    return refused.stream().filter(lines).count();
  }

  /** Requests passed on to the server so far whose request line {@code lines} picks. */
  public long passed(Predicate<String> lines) {
    return passed.stream().filter(lines).count();
  }

  /** {@code https://127.0.0.1:<port>}: a server URL for a kubeconfig. */
  public String url() {
    return "https://127.0.0.1:" + server.getLocalPort();
  }

  /** The authority of the proxy's serving certificate, for the kubeconfig's CA data. */
  public String caCertificatePem() {
    return authority.caCertificatePem();
  }

  private void acceptForever() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        sockets.add(client);
        daemon("refusing-proxy-conn", () -> serve(client)).start();
      } catch (IOException e) {
        if (server.isClosed()) {
          return;
        }
      }
    }
  }

  /** One client connection: its requests in order, each refused or passed on. */
  private void serve(Socket client) {
    Socket target = null;
    try (client) {
      InputStream in = new java.io.BufferedInputStream(client.getInputStream());
      OutputStream toClient = client.getOutputStream();
      while (true) {
        byte[] head = readHead(in);
        if (head == null) {
          return;
        }
        String text = new String(head, StandardCharsets.ISO_8859_1);
        String requestLine = text.substring(0, text.indexOf("\r\n"));
        if (refusing.stream().anyMatch(p -> p.test(requestLine))) {
          refused.add(requestLine);
          skipBody(in, text);
          toClient.write(tooManyRequests());
          toClient.flush();
          return; // Connection: close, as said
        }
        passed.add(requestLine);
        if (target == null) {
          target = upstreamTls.createSocket(upstream.getHostString(), upstream.getPort());
          sockets.add(target);
          Socket from = target;
          daemon("refusing-proxy-down", () -> pump(from, client)).start();
        }
        OutputStream toServer = target.getOutputStream();
        toServer.write(head);
        copyBody(in, toServer, text);
        toServer.flush();
      }
    } catch (IOException e) {
      // The client or the server went away, or the proxy is closing.
    } finally {
      closeQuietly(target);
    }
  }

  /** The request's head up to and including its blank line; null at the end of the stream. */
  private static byte[] readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
      if (matched == 4) {
        return head.toByteArray();
      }
    }
    return null;
  }

  private static void skipBody(InputStream in, String head) throws IOException {
    copyBody(in, OutputStream.nullOutputStream(), head);
  }

  /** The request's body, by its Content-Length or chunk by chunk. */
  private static void copyBody(InputStream in, OutputStream out, String head) throws IOException {
    String lower = head.toLowerCase(Locale.ROOT);
    if (lower.contains("\r\ntransfer-encoding: chunked")) {
      while (true) {
        String sizeLine = readLine(in, out);
        int size = Integer.parseInt(sizeLine.split(";")[0].trim(), 16);
        if (size == 0) {
          // Trailers, if any, up to the blank line.
          while (!readLine(in, out).isEmpty()) {}
          return;
        }
        copy(in, out, size);
        readLine(in, out);
      }
    }
    int at = lower.indexOf("\r\ncontent-length:");
    if (at >= 0) {
      int end = lower.indexOf("\r\n", at + 2);
      copy(in, out, Long.parseLong(lower.substring(at + 17, end).trim()));
    }
  }

  /** One CRLF-ended line, copied; returned without its CRLF. */
  private static String readLine(InputStream in, OutputStream out) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      out.write(b);
      if (b == '\n') {
        break;
      }
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.ISO_8859_1);
  }

  private static void copy(InputStream in, OutputStream out, long n) throws IOException {
    byte[] buffer = new byte[16 * 1024];
    while (n > 0) {
      int r = in.read(buffer, 0, (int) Math.min(buffer.length, n));
      if (r < 0) {
        throw new IOException("the body ended early");
      }
      out.write(buffer, 0, r);
      n -= r;
    }
  }

  /** The server's answers, as they come (a watch streams for as long as it lasts). */
  private static void pump(Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream()) {
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // The other side went away, or the proxy is closing.
    } finally {
      closeQuietly(to);
    }
  }

  private static byte[] tooManyRequests() {
    byte[] body = TOO_MANY_REQUESTS.getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 429 Too Many Requests\r\n"
            + "Content-Type: application/json\r\n"
            + "Retry-After: 1\r\n"
            + "Content-Length: "
            + body.length
            + "\r\n"
            + "Connection: close\r\n\r\n";
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(head.getBytes(StandardCharsets.ISO_8859_1));
    out.writeBytes(body);
    return out.toByteArray();
  }

  /** TLS to the API server, its certificate checked against the cluster's CA. */
  private static SSLSocketFactory trusting(String caPem) {
    try {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      trust.setCertificateEntry(
          "ca",
          CertificateFactory.getInstance("X.509")
              .generateCertificate(
                  new ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII))));
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context.getSocketFactory();
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot trust the cluster's CA: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    closeQuietly(server);
    sockets.forEach(RefusingProxy::closeQuietly);
    sockets.clear();
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c == null) {
      return;
    }
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
