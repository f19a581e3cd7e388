package dev.capk.vmieviction.kube;

import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.credentials.Authentication;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;

/**
 * A kubeconfig's client certificate and key as the client's own authentication uses them, read with
 * the JDK alone. The client's reader registers BouncyCastle as a security provider first, which
 * costs a fresh CLI process a tenth of a CPU-second; the three PEM key shapes kubeconfigs carry
 * (PKCS#8 {@code PRIVATE KEY}, PKCS#1 {@code RSA PRIVATE KEY}, SEC1 {@code EC PRIVATE KEY} with its
 * curve) need no provider. Any other shape is left to the client's reader.
 */
public final class ClientCertificates {
  private static final byte[] RSA_ALGORITHM = hex("300d06092a864886f70d0101010500");
  private static final byte[] EC_PUBLIC_KEY_OID = hex("06072a8648ce3d0201");
  private static final char[] IN_MEMORY = new char[0];

  private ClientCertificates() {}

  /**
   * The kubeconfig's client certificate authentication, when its user names a certificate and a key
   * in a shape read here; empty otherwise (the client's own authentication applies).
   */
  public static Optional<Authentication> of(KubeConfig config) throws IOException {
    byte[] cert =
        config.getDataOrFileRelative(
            config.getClientCertificateData(), config.getClientCertificateFile());
    byte[] key = config.getDataOrFileRelative(config.getClientKeyData(), config.getClientKeyFile());
    if (cert == null || key == null) {
      return Optional.empty();
    }
    return privateKey(key).map(k -> client -> client.setKeyManagers(keyManagers(cert, k)));
  }

  /**
   * The client's builder for this kubeconfig, with the client certificate read here when it is in a
   * shape read here: what every client of a kubeconfig in this project is built from.
   */
  public static ClientBuilder builder(KubeConfig config) throws IOException {
    ClientBuilder builder = ClientBuilder.kubeconfig(config);
    of(config).ifPresent(builder::setAuthentication);
    return builder;
  }

  /**
   * {@link #builder(KubeConfig)} of a kubeconfig file, its relative file references read beside it
   * (as the client's {@code Config.fromConfig} does, which would read the key with BouncyCastle).
   */
  public static ClientBuilder builder(Path file) throws IOException {
    KubeConfig config;
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      config = KubeConfig.loadKubeConfig(reader);
    }
    config.setFile(file.toAbsolutePath().toFile());
    return builder(config);
  }

  /** The PEM private key, if it is one of the three shapes; empty for any other. */
  static Optional<PrivateKey> privateKey(byte[] pem) {
    try {
      String text = new String(pem, StandardCharsets.US_ASCII);
      byte[] der;
      if ((der = block(text, "PRIVATE KEY")) != null) {
        return pkcs8(der, "RSA", "EC", "Ed25519", "Ed448");
      }
      if ((der = block(text, "RSA PRIVATE KEY")) != null) {
        return pkcs8(sequence(hex("020100"), RSA_ALGORITHM, tlv(0x04, der)), "RSA");
      }
      if ((der = block(text, "EC PRIVATE KEY")) != null) {
        byte[] curve = sec1Curve(der);
        return curve == null
            ? Optional.empty()
            : pkcs8(
                sequence(hex("020100"), sequence(EC_PUBLIC_KEY_OID, curve), tlv(0x04, der)), "EC");
      }
    } catch (IllegalArgumentException e) {
      // Not base64 or not the DER expected: the client's reader decides.
    }
    return Optional.empty();
  }

  private static KeyManager[] keyManagers(byte[] cert, PrivateKey key) {
    try {
      Certificate[] chain =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(cert))
              .toArray(Certificate[]::new);
      KeyStore store = KeyStore.getInstance("JKS");
      store.load(null, null);
      store.setKeyEntry("client", key, IN_MEMORY, chain);
      KeyManagerFactory factory =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      factory.init(store, IN_MEMORY);
      return factory.getKeyManagers();
    } catch (GeneralSecurityException | IOException e) {
      // The type only, as the client's own: the message could quote the certificate.
      throw new IllegalStateException(
          "cannot use the client certificate: " + e.getClass().getSimpleName());
    }
  }

  private static Optional<PrivateKey> pkcs8(byte[] der, String... algorithms) {
    for (String algorithm : algorithms) {
      try {
        return Optional.of(
            KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der)));
      } catch (GeneralSecurityException e) {
        // Not this algorithm's key: the next one.
      }
    }
    return Optional.empty();
  }

  /** The DER bytes of the PEM block of this type; null if there is none. */
  private static byte[] block(String text, String type) {
    String begin = "-----BEGIN " + type + "-----";
    int start = text.indexOf(begin);
    int end = text.indexOf("-----END " + type + "-----");
    if (start < 0 || end < start) {
      return null;
    }
    return Base64.getMimeDecoder().decode(text.substring(start + begin.length(), end));
  }

  /**
   * The named curve's OID (tag and all) of a SEC1 ECPrivateKey: SEQUENCE { version, privateKey
   * OCTET STRING, [0] parameters, [1] publicKey }; null without one.
   */
  private static byte[] sec1Curve(byte[] der) {
    int[] seq = header(der, 0, 0x30);
    for (int at = seq[0]; at < seq[0] + seq[1]; ) {
      int[] item = header(der, at, -1);
      if ((der[at] & 0xff) == 0xa0) {
        int[] oid = header(der, item[0], 0x06);
        return Arrays.copyOfRange(der, item[0], oid[0] + oid[1]);
      }
      at = item[0] + item[1];
    }
    return null;
  }

  /**
   * {start of content, content length} of the DER element at {@code at}, of {@code tag} if >= 0.
   */
  private static int[] header(byte[] der, int at, int tag) {
    if (at + 2 > der.length || (tag >= 0 && (der[at] & 0xff) != tag)) {
      throw new IllegalArgumentException("unexpected DER");
    }
    int first = der[at + 1] & 0xff;
    int content = at + 2;
    int length = first;
    if (first >= 0x80) {
      int bytes = first & 0x7f;
      if (bytes < 1 || bytes > 3 || content + bytes > der.length) {
        throw new IllegalArgumentException("unexpected DER length"); // indefinite or huge
      }
      length = 0;
      for (int i = 0; i < bytes; i++) {
        length = (length << 8) | (der[content++] & 0xff);
      }
    }
    if (content + length > der.length) {
      throw new IllegalArgumentException("unexpected DER length");
    }
    return new int[] {content, length};
  }

  private static byte[] sequence(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      all.writeBytes(part);
    }
    return tlv(0x30, all.toByteArray());
  }

  private static byte[] tlv(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    int n = content.length;
    if (n < 0x80) {
      out.write(n);
    } else {
      int bytes = n < 0x100 ? 1 : n < 0x10000 ? 2 : 3;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write(n >>> (8 * i));
      }
    }
    out.writeBytes(content);
    return out.toByteArray();
  }

  private static byte[] hex(String s) {
    return HexFormat.of().parseHex(s);
  }
}
