package dev.capk.vmieviction.training;

import java.io.StringWriter;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.http2.HTTP2Cipher;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * An HTTPS server on 127.0.0.1 that speaks HTTP/2 (and HTTP/1.1), as kube-apiserver does, with a
 * self-signed certificate made at start: clients trust it through the kubeconfigs {@link
 * #kubeconfig} writes, which name their caller by a bearer token.
 */
public final class LoopbackServer implements AutoCloseable {
  private static final char[] PASSWORD = "loopback".toCharArray();

  private final Server server;
  private final ServerConnector connector;
  private final String certificatePem;

  public LoopbackServer(Handler handler) throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair key = generator.generateKeyPair();
    X509Certificate certificate = selfSigned(key);
    certificatePem = pem(certificate);
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("serving", key.getPrivate(), PASSWORD, new Certificate[] {certificate});

    SslContextFactory.Server tls = new SslContextFactory.Server();
    tls.setKeyStore(store);
    tls.setKeyStorePassword(new String(PASSWORD));
    tls.setCipherComparator(HTTP2Cipher.COMPARATOR);
    HttpConfiguration http = new HttpConfiguration();
    // Clients reach it by IP address: no host name to check against the certificate's.
    http.addCustomizer(new SecureRequestCustomizer(false));
    HttpConnectionFactory http1 = new HttpConnectionFactory(http);
    HTTP2ServerConnectionFactory http2 = new HTTP2ServerConnectionFactory(http);
    ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory();
    alpn.setDefaultProtocol(http1.getProtocol());

    server = new Server();
    connector =
        new ServerConnector(
            server, new SslConnectionFactory(tls, alpn.getProtocol()), alpn, http2, http1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    // Watches are quiet for long stretches, as on a real API server.
    connector.setIdleTimeout(Duration.ofMinutes(10).toMillis());
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
  }

  /** The server's certificate (PEM), which is its own authority. */
  public String certificatePem() {
    return certificatePem;
  }

  public String url() {
    return "https://127.0.0.1:" + connector.getLocalPort();
  }

  /** A kubeconfig for this server that names its caller by the bearer token {@code token}. */
  public String kubeconfig(String token) {
    String ca =
        java.util.Base64.getEncoder()
            .encodeToString(certificatePem.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    return String.join(
        "\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: loopback",
        "  cluster:",
        "    server: " + url(),
        "    certificate-authority-data: " + ca,
        "users:",
        "- name: caller",
        "  user:",
        "    token: \"" + token + "\"",
        "contexts:",
        "- name: loopback",
        "  context:",
        "    cluster: loopback",
        "    user: caller",
        "current-context: loopback",
        "");
  }

  /** The bearer token of a request's Authorization header, or "" without one. */
  public static String token(String authorization) {
    return authorization != null && authorization.startsWith("Bearer ")
        ? authorization.substring("Bearer ".length()).trim()
        : "";
  }

  private static X509Certificate selfSigned(KeyPair key) throws GeneralSecurityException {
    try {
      X500Name name = new X500Name("CN=loopback");
      Instant now = Instant.now();
      JcaX509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              name,
              new BigInteger(64, new SecureRandom()).add(BigInteger.ONE),
              Date.from(now.minus(Duration.ofHours(1))),
              Date.from(now.plus(Duration.ofDays(1))),
              name,
              key.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(
              new GeneralName[] {
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.dNSName, "localhost")
              }));
      return new JcaX509CertificateConverter()
          .getCertificate(
              b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key.getPrivate())));
    } catch (org.bouncycastle.operator.OperatorCreationException
        | org.bouncycastle.cert.CertIOException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private static String pem(Object object) throws java.io.IOException {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(object);
    }
    return out.toString();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
