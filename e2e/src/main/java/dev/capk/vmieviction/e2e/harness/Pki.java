package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway certificate authority for one local cluster: the API server's serving certificate,
 * client certificates for the admin and the components, and the service-account signing key. ECDSA
 * P-256 keeps generation fast.
 */
public final class Pki {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Duration VALIDITY = Duration.ofDays(30);

  private final KeyPair caKey;
  private final X509Certificate caCert;

  /** A certificate and its private key, both PEM encoded. */
  public record Issued(String certificatePem, String privateKeyPem) {}

  private Pki(KeyPair caKey, X509Certificate caCert) {
    this.caKey = caKey;
    this.caCert = caCert;
  }

  public static Pki newAuthority(String commonName) {
    try {
      KeyPair key = newKeyPair();
      X500Name subject = name(commonName, null);
      X509v3CertificateBuilder builder = builder(subject, null, key);
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      builder.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
      return new Pki(key, sign(builder, key));
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException(
          "cannot create a certificate authority: " + e.getMessage(), e);
    }
  }

  public String caCertificatePem() {
    return pem(caCert);
  }

  private static boolean isIpLiteral(String name) {
    return name.matches("[0-9.]+") || name.contains(":");
  }

  /**
   * A TLS serving certificate for loopback (127.0.0.1, ::1, localhost) and the given extra DNS
   * names or IP literals.
   */
  public Issued serving(String commonName, List<String> dnsNames) {
    try {
      KeyPair key = newKeyPair();
      X509v3CertificateBuilder builder = builder(name(commonName, null), caCert, key);
      List<GeneralName> names = new ArrayList<>();
      names.add(new GeneralName(GeneralName.dNSName, "localhost"));
      for (String dns : dnsNames) {
        names.add(
            new GeneralName(isIpLiteral(dns) ? GeneralName.iPAddress : GeneralName.dNSName, dns));
      }
      names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
      names.add(
          new GeneralName(GeneralName.iPAddress, InetAddress.getByName("::1").getHostAddress()));
      builder.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(names.toArray(GeneralName[]::new)));
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      builder.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      return new Issued(pem(sign(builder, caKey)), privateKeyPem(key.getPrivate()));
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot issue a serving certificate: " + e.getMessage(), e);
    }
  }

  /** A client certificate: the API server reads the user from CN and the groups from O. */
  public Issued client(String user, String group) {
    try {
      KeyPair key = newKeyPair();
      X509v3CertificateBuilder builder = builder(name(user, group), caCert, key);
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      return new Issued(pem(sign(builder, caKey)), privateKeyPem(key.getPrivate()));
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot issue a client certificate: " + e.getMessage(), e);
    }
  }

  /** A key pair for signing service-account tokens: PEM private key and PEM public key. */
  public static Issued serviceAccountKey() {
    try {
      KeyPair key = newKeyPair();
      return new Issued(pem(key.getPublic()), privateKeyPem(key.getPrivate()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(
          "cannot create the service-account key: " + e.getMessage(), e);
    }
  }

  /**
   * A TLS server context that serves {@code serving} (for HTTPS servers the tests run, e.g.
   * webhooks).
   */
  public static javax.net.ssl.SSLContext serverContext(Issued serving) {
    try {
      java.security.cert.CertificateFactory factory =
          java.security.cert.CertificateFactory.getInstance("X.509");
      java.security.cert.Certificate cert =
          factory.generateCertificate(
              new java.io.ByteArrayInputStream(
                  serving.certificatePem().getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
      String body =
          serving.privateKeyPem().replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
      java.security.PrivateKey key =
          java.security.KeyFactory.getInstance("EC")
              .generatePrivate(
                  new java.security.spec.PKCS8EncodedKeySpec(
                      java.util.Base64.getDecoder().decode(body)));
      java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
      store.load(null, null);
      char[] password = new char[0];
      store.setKeyEntry("serving", key, password, new java.security.cert.Certificate[] {cert});
      javax.net.ssl.KeyManagerFactory kmf =
          javax.net.ssl.KeyManagerFactory.getInstance(
              javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, password);
      javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
      context.init(kmf.getKeyManagers(), null, null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot build a TLS server context: " + e.getMessage(), e);
    }
  }

  public static void write(Path file, String content) throws IOException {
    Files.writeString(file, content);
    // Keys are test-only, but still readable by the owner alone.
    file.toFile().setReadable(false, false);
    file.toFile().setReadable(true, true);
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  private static X500Name name(String commonName, String organization) {
    X500NameBuilder b = new X500NameBuilder(BCStyle.INSTANCE);
    if (organization != null) {
      b.addRDN(BCStyle.O, organization);
    }
    b.addRDN(BCStyle.CN, commonName);
    return b.build();
  }

  /** A certificate builder; {@code issuer} null means self-signed. */
  private static X509v3CertificateBuilder builder(
      X500Name subject, X509Certificate issuer, KeyPair key) {
    Instant now = Instant.now();
    BigInteger serial = new BigInteger(64, RANDOM).add(BigInteger.ONE);
    Date notBefore = Date.from(now.minus(Duration.ofHours(1)));
    Date notAfter = Date.from(now.plus(VALIDITY));
    // Taking the issuer from the CA certificate keeps its DER name byte-identical, which chain
    // checks need.
    return issuer == null
        ? new JcaX509v3CertificateBuilder(
            subject, serial, notBefore, notAfter, subject, key.getPublic())
        : new JcaX509v3CertificateBuilder(
            issuer, serial, notBefore, notAfter, subject, key.getPublic());
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer)
      throws GeneralSecurityException {
    try {
      ContentSigner contentSigner =
          new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate());
      return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
    } catch (org.bouncycastle.operator.OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  /**
   * PKCS#8 ("PRIVATE KEY"): carries the curve, which the SEC1 form BouncyCastle writes for a bare
   * JCA key leaves out, and which Go and the Java client both read.
   */
  private static String privateKeyPem(java.security.PrivateKey key) {
    String body =
        java.util.Base64.getMimeEncoder(
                64, "\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
            .encodeToString(key.getEncoded());
    return "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n";
  }

  private static String pem(Object object) {
    try {
      StringWriter out = new StringWriter();
      try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
        writer.writeObject(object);
      }
      return out.toString();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
