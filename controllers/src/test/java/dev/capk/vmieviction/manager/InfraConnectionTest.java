package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.kube.ClientCertificatesTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Security;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.X509KeyManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The clients of --kubeconfig: its client certificate and key, in the shapes kubeconfigs carry,
 * read with the JDK alone (BouncyCastle, which the client's own reader registers, costs a fresh
 * process about 800 classes loaded from the jar), file references resolved beside the file.
 */
class InfraConnectionTest {

  @ParameterizedTest
  @CsvSource({"rsa-pkcs1.key, rsa.crt", "ec-sec1.key, ec.crt"})
  void aKubeconfigFilesCertificateAndKeyFilesBecomeTheClientsKeyManager(
      String key, String cert, @TempDir Path dir) throws Exception {
    Path kubeconfig = kubeconfigBeside(dir, key, cert);
    try (InfraConnection home = InfraConnection.local(kubeconfig)) {
      for (var client : List.of(home.requestClient, home.watchClient)) {
        X509KeyManager manager = (X509KeyManager) client.getKeyManagers()[0];
        assertArrayEquals(
            CertificateFactory.getInstance("X.509")
                .generateCertificate(Files.newInputStream(dir.resolve("client.crt")))
                .getEncoded(),
            manager.getCertificateChain("client")[0].getEncoded());
      }
    }
  }

  @Test
  void aFreshProcessReadsTheKeyWithoutBouncyCastle(@TempDir Path dir) throws Exception {
    Path kubeconfig = kubeconfigBeside(dir, "rsa-pkcs1.key", "rsa.crt");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of("-cp", System.getProperty("java.class.path")));
    command.add(Probe.class.getName());
    command.add(kubeconfig.toString());
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(60, TimeUnit.SECONDS);
    assertEquals("client certificate read; BouncyCastle registered: false", lastLine(out), out);
  }

  /** Run in a child JVM: builds the connection and says whether BouncyCastle got registered. */
  public static final class Probe {
    public static void main(String[] args) throws Exception {
      try (InfraConnection home = InfraConnection.local(Path.of(args[0]))) {
        boolean read = home.requestClient.getKeyManagers() != null;
        System.out.println(
            (read ? "client certificate read" : "no client certificate")
                + "; BouncyCastle registered: "
                + (Security.getProvider("BC") != null));
      }
      System.exit(0);
    }
  }

  /** A kubeconfig naming its certificate and key as files beside it, relative to it. */
  private static Path kubeconfigBeside(Path dir, String key, String cert) throws Exception {
    Files.write(dir.resolve("client.key"), ClientCertificatesTest.fixture(key));
    Files.write(dir.resolve("client.crt"), ClientCertificatesTest.fixture(cert));
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(
        kubeconfig,
        ClientCertificatesTest.kubeconfig(
            "    client-certificate: client.crt\n    client-key: client.key\n"));
    return kubeconfig;
  }

  private static String lastLine(String out) {
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1];
  }
}
