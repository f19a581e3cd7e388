package dev.capk.vmieviction.e2e.harness;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Writes kubeconfig files with the credentials embedded, as Cluster API's `<cluster>-kubeconfig`
 * Secrets hold them.
 */
public final class Kubeconfigs {
  private Kubeconfigs() {}

  /** A kubeconfig that authenticates with a client certificate. */
  public static String withClientCertificate(
      String clusterName, String server, String caPem, Pki.Issued client, String user) {
    return header(clusterName, server, caPem, user)
        + "    client-certificate-data: "
        + b64(client.certificatePem())
        + "\n"
        + "    client-key-data: "
        + b64(client.privateKeyPem())
        + "\n";
  }

  /** A kubeconfig that authenticates with a bearer token (for example a ServiceAccount's). */
  public static String withToken(
      String clusterName, String server, String caPem, String token, String user) {
    return header(clusterName, server, caPem, user) + "    token: " + token + "\n";
  }

  private static String header(String clusterName, String server, String caPem, String user) {
    return "apiVersion: v1\n"
        + "kind: Config\n"
        + "clusters:\n"
        + "- name: "
        + clusterName
        + "\n"
        + "  cluster:\n"
        + "    server: "
        + server
        + "\n"
        + "    certificate-authority-data: "
        + b64(caPem)
        + "\n"
        + "contexts:\n"
        + "- name: "
        + clusterName
        + "\n"
        + "  context:\n"
        + "    cluster: "
        + clusterName
        + "\n"
        + "    user: "
        + user
        + "\n"
        + "current-context: "
        + clusterName
        + "\n"
        + "users:\n"
        + "- name: "
        + user
        + "\n"
        + "  user:\n";
  }

  private static String b64(String pem) {
    return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.UTF_8));
  }
}
