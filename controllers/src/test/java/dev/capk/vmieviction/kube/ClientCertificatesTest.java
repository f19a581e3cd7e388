package dev.capk.vmieviction.kube;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.SSLUtils;
import io.kubernetes.client.util.credentials.Authentication;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Optional;
import javax.net.ssl.KeyManager;
import javax.net.ssl.X509KeyManager;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Client certificate keys read with the JDK alone, in the shapes kubeconfigs carry. The fixtures in
 * {@code client-certificates/} were made by OpenSSL 3.0 ({@code ecparam -genkey}, {@code ec},
 * {@code pkcs8 -topk8 -nocrypt}, {@code genpkey}, {@code rsa -traditional}, {@code req -x509}):
 * each key is proved by signing with it and verifying with its certificate's public key.
 */
public class ClientCertificatesTest {

  @ParameterizedTest
  @CsvSource({
    "ec-pkcs8.key, ec.crt, SHA256withECDSA",
    "ec-sec1.key, ec.crt, SHA256withECDSA",
    "ec-sec1-with-parameters.key, ec.crt, SHA256withECDSA",
    "rsa-pkcs8.key, rsa.crt, SHA256withRSA",
    "rsa-pkcs1.key, rsa.crt, SHA256withRSA",
    "ed25519-pkcs8.key, ed25519.crt, Ed25519"
  })
  void eachKeyShapeIsReadAsTheKeyOfItsCertificate(String key, String cert, String algorithm)
      throws Exception {
    PrivateKey read = ClientCertificates.privateKey(fixture(key)).orElseThrow();
    assertTrue(signs(read, certificate(cert), algorithm), key + " is not " + cert + "'s key");
  }

  @ParameterizedTest
  @ValueSource(strings = {"ec-pkcs8.key", "ec-sec1.key", "rsa-pkcs1.key", "rsa-pkcs8.key"})
  void theKeyIsTheOneTheClientsOwnReaderFinds(String key) throws Exception {
    byte[] pem = fixture(key);
    PrivateKey ours = ClientCertificates.privateKey(pem).orElseThrow();
    PrivateKey theirs = SSLUtils.loadKey(pem);
    assertEquals(
        new java.math.BigInteger(1, privateValue(theirs)),
        new java.math.BigInteger(1, privateValue(ours)));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        // A curve given by its parameters, not its name: left to the client's reader.
        "ec-sec1-explicit-curve.key",
        // Not a key at all.
        "ec.crt",
      })
  void otherShapesAreLeftToTheClientsReader(String file) throws Exception {
    assertEquals(Optional.empty(), ClientCertificates.privateKey(fixture(file)));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "-----BEGIN PRIVATE KEY-----\nnot base64 at all!\n-----END PRIVATE KEY-----\n",
        "-----BEGIN EC PRIVATE KEY-----\nMAMCAQE=\n-----END EC PRIVATE KEY-----\n",
        "-----BEGIN RSA PRIVATE KEY-----\nMAA=\n-----END RSA PRIVATE KEY-----\n",
        "-----BEGIN EC PRIVATE KEY-----\nMIQAAAAA\n-----END EC PRIVATE KEY-----\n",
        "",
      })
  void malformedKeysAreLeftToTheClientsReader(String pem) {
    assertEquals(
        Optional.empty(), ClientCertificates.privateKey(pem.getBytes(StandardCharsets.US_ASCII)));
  }

  @ParameterizedTest
  @CsvSource({"ec-sec1.key, ec.crt", "rsa-pkcs1.key, rsa.crt"})
  void aKubeconfigsCertificateAndKeyBecomeTheClientsKeyManager(String key, String cert)
      throws Exception {
    KubeConfig config = KubeConfig.loadKubeConfig(new StringReader(kubeconfig(key, cert)));
    Authentication authentication = ClientCertificates.of(config).orElseThrow();
    ApiClient client = new ApiClient();
    authentication.provide(client);
    KeyManager[] managers = client.getKeyManagers();
    assertNotNull(managers);
    X509KeyManager manager = (X509KeyManager) managers[0];
    String alias =
        manager.getClientAliases(manager.getPrivateKey("client").getAlgorithm(), null)[0];
    assertArrayEquals(
        certificate(cert).getEncoded(), manager.getCertificateChain(alias)[0].getEncoded());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "    token: abc\n"})
  void aKubeconfigWithoutACertificateAndKeyIsLeftToTheClient(String user) throws Exception {
    KubeConfig config = KubeConfig.loadKubeConfig(new StringReader(kubeconfig(user)));
    assertEquals(Optional.empty(), ClientCertificates.of(config));
  }

  private static String kubeconfig(String key, String cert) throws Exception {
    Base64.Encoder b64 = Base64.getEncoder();
    return kubeconfig(
        "    client-certificate-data: %s\n    client-key-data: %s\n"
            .formatted(b64.encodeToString(fixture(cert)), b64.encodeToString(fixture(key))));
  }

  /** A kubeconfig whose one user has these fields (indented under {@code user:}). */
  public static String kubeconfig(String user) {
    return """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
        contexts: [{name: x, context: {cluster: c, user: u}}]
        current-context: x
        users:
        - name: u
          user:
        """
        + user;
  }

  private static boolean signs(PrivateKey key, X509Certificate cert, String algorithm)
      throws Exception {
    byte[] message = "a cordon".getBytes(StandardCharsets.UTF_8);
    Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(message);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance(algorithm);
    verifier.initVerify(cert.getPublicKey());
    verifier.update(message);
    return verifier.verify(signature);
  }

  /** The private scalar or exponent, whichever provider made the key. */
  private static byte[] privateValue(PrivateKey key) {
    if (key instanceof java.security.interfaces.ECPrivateKey ec) {
      return ec.getS().toByteArray();
    }
    return ((java.security.interfaces.RSAPrivateKey) key).getPrivateExponent().toByteArray();
  }

  private static X509Certificate certificate(String name) throws Exception {
    try (InputStream in = new java.io.ByteArrayInputStream(fixture(name))) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /** A file of {@code client-certificates/}. */
  public static byte[] fixture(String name) throws Exception {
    try (InputStream in =
        ClientCertificatesTest.class.getResourceAsStream("/client-certificates/" + name)) {
      return in.readAllBytes();
    }
  }
}
