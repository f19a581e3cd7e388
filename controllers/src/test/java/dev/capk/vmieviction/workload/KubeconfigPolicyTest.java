package dev.capk.vmieviction.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * TLS is never relaxed by a guest kubeconfig, unless the operator allows it: one row per cluster
 * field.
 */
class KubeconfigPolicyTest {

  static final String KUBECONFIG =
      """
      apiVersion: v1
      kind: Config
      clusters:
      - name: c
        cluster:
          server: https://10.0.0.1:6443
          certificate-authority-data: Q0EK
          %s
      users:
      - name: u
        user: {token: dG9rZW4K}
      contexts:
      - name: x
        context: {cluster: c, user: u}
      current-context: x
      """;

  /**
   * Row: the cluster field as written, the field a refusal must name (null: accepted), a value
   * never to be quoted.
   */
  static Stream<Arguments> tlsFields() {
    return Stream.of(
        Arguments.of("insecure-skip-tls-verify: true", "insecure-skip-tls-verify", null),
        Arguments.of("insecure-skip-tls-verify: \"true\"", "insecure-skip-tls-verify", null),
        Arguments.of("insecure-skip-tls-verify: false", null, null),
        Arguments.of("tls-server-name: evil-name.example", "tls-server-name", "evil-name.example"),
        Arguments.of("tls-server-name: \"\"", null, null),
        Arguments.of(
            "proxy-url: http://evil-proxy.example:3128", "proxy-url", "evil-proxy.example"),
        Arguments.of(
            "proxy-url: socks5://evil-socks.example:1080", "proxy-url", "evil-socks.example"),
        Arguments.of("# nothing relaxed", null, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tlsFields")
  void aFieldThatRelaxesTlsIsRefusedByNameUnlessTheOperatorAllowsIt(
      String field, String refusedName, String value) {
    String kubeconfig = KUBECONFIG.formatted(field);
    List<String> strict = GuestClients.kubeconfigViolations(kubeconfig, false);
    if (refusedName == null) {
      assertEquals(List.of(), strict);
    } else {
      assertEquals(1, strict.size(), strict.toString());
      assertTrue(strict.get(0).contains("'" + refusedName + "'"), strict.get(0));
      assertTrue(strict.get(0).contains("--allow-insecure-guest-tls"), strict.get(0));
    }
    if (value != null) {
      assertTrue(strict.stream().noneMatch(p -> p.contains(value)), "value quoted: " + strict);
    }
    assertEquals(
        List.of(),
        GuestClients.kubeconfigViolations(kubeconfig, true),
        "allowed by --allow-insecure-guest-tls");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tlsFields")
  void allowingInsecureTlsAllowsNothingElse(String field, String refusedName, String value) {
    String withExec =
        KUBECONFIG
            .formatted(field)
            .replace("user: {token: dG9rZW4K}", "user: {exec: {command: /bin/sh}}");
    List<String> problems = GuestClients.kubeconfigViolations(withExec, true);
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).contains("'exec'"), problems.get(0));
    assertFalse(
        GuestClients.kubeconfigViolations(
                KUBECONFIG.formatted(field).replace("https://", "http://"), true)
            .isEmpty());
  }
}
