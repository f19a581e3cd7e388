package dev.capk.vmieviction.workload;

import io.kubernetes.client.openapi.ApiException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.security.cert.CertificateException;
import javax.net.ssl.SSLPeerUnverifiedException;

/** Classifies guest API failures: which are worth a retry and count against the circuit breaker. */
public final class GuestCalls {
  private GuestCalls() {}

  /**
   * Transient: the guest API server could not be reached, was too slow, or said it is overloaded or
   * failing (0 = no HTTP response, 429, 500, 502, 503, 504). A 404, 409 or 422 means the server
   * works and answered; retrying would not change the answer.
   */
  public static boolean isTransient(Throwable t) {
    if (isCertificateRejected(t)) {
      return false; // the same certificate will be presented again: retrying cannot help
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ApiException e) {
        int code = e.getCode();
        if (code == 0) {
          return true; // no HTTP response at all: connection refused, reset, timed out
        }
        return code == 429 || code == 500 || code == 502 || code == 503 || code == 504;
      }
      if (c instanceof IOException || c instanceof InterruptedIOException) {
        return true;
      }
      if (c == c.getCause()) {
        break;
      }
    }
    return false;
  }

  /**
   * The TLS handshake failed on the server's certificate: not signed by the kubeconfig's CA (a
   * {@link CertificateException} below the handshake failure), or not naming the server (OkHttp's
   * {@link SSLPeerUnverifiedException}). Other handshake failures (the peer closing the connection
   * mid-handshake, as a restarting server does) stay transient.
   */
  public static boolean isCertificateRejected(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof CertificateException || c instanceof SSLPeerUnverifiedException) {
        return true;
      }
      if (c == c.getCause()) {
        break;
      }
    }
    return false;
  }

  /** 401 or 403: the kubeconfig's identity is not (or no longer) allowed. */
  public static boolean isForbidden(Throwable t) {
    return t instanceof ApiException e && (e.getCode() == 401 || e.getCode() == 403);
  }
}
