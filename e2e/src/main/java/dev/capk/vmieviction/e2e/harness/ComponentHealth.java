package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/** Waits for a component this harness started to answer on its health endpoint. */
final class ComponentHealth {
  static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final SSLContext TRUST_ALL = trustAll();

  private ComponentHealth() {}

  interface Probe {
    boolean ok() throws Exception;
  }

  /**
   * Polls {@code probe}; fails fast, with the log's tail, if the process dies or never gets
   * healthy.
   */
  static void await(ManagedProcess p, Probe probe) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException(p.describe("exited during start-up"));
      }
      try {
        if (probe.ok()) {
          return;
        }
      } catch (Exception ignored) {
        // not serving yet
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while starting " + p.component(), e);
      }
    }
    throw new IllegalStateException(
        p.describe("did not become healthy within " + START_TIMEOUT.toSeconds() + "s"));
  }

  /** The component could not bind its port: worth retrying with another one. */
  static boolean portCollision(ManagedProcess p) {
    return ProcessLogs.contains(p.log(), "address already in use");
  }

  /**
   * GET on a loopback health endpoint of a component we started. Components serve self-signed
   * certificates they generate themselves, so neither chain nor host name can be checked here.
   */
  static boolean httpOk(String url) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) URI.create(url).toURL().openConnection();
    if (connection instanceof HttpsURLConnection https) {
      https.setSSLSocketFactory(TRUST_ALL.getSocketFactory());
      https.setHostnameVerifier((host, session) -> true);
    }
    connection.setConnectTimeout(2000);
    connection.setReadTimeout(2000);
    try {
      return connection.getResponseCode() == 200;
    } finally {
      connection.disconnect();
    }
  }

  private static SSLContext trustAll() {
    try {
      // Only for health probes of loopback processes this harness started itself.
      X509TrustManager all =
          new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public X509Certificate[] getAcceptedIssuers() {
              return new X509Certificate[0];
            }
          };
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {all}, null);
      return context;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
