package dev.capk.vmieviction.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.capk.KubevirtCluster;
import dev.capk.vmieviction.infra.InfraBindings.SecretRef;
import dev.capk.vmieviction.infra.InfraBindings.Target;
import dev.capk.vmieviction.workload.GuestClusterRef;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * KubevirtClusters and their infra Secrets to connections, watched namespaces and bound Clusters.
 */
class InfraBindingsTest {

  static final String KUBECONFIG_1 = kubeconfig("https://infra-1.example:6443", "token-1");
  static final String KUBECONFIG_2 = kubeconfig("https://infra-2.example:6443", "token-2");

  static String kubeconfig(String server, String token) {
    return """
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster: {server: %s, certificate-authority-data: Q0E=}
        users:
        - name: u
          user: {token: %s}
        contexts:
        - name: x
          context: {cluster: c, user: u}
        current-context: x
        """
        .formatted(server, token);
  }

  static KubevirtCluster kvc(String ns, String name, String owner, String secretNs, String secret) {
    V1ObjectMeta meta = new V1ObjectMeta().namespace(ns).name(name).uid("uid-" + name);
    if (owner != null) {
      meta.ownerReferences(
          List.of(
              new V1OwnerReference()
                  .apiVersion("cluster.x-k8s.io/v1beta1")
                  .kind("Cluster")
                  .name(owner)
                  .uid("c")));
    }
    KubevirtCluster k = new KubevirtCluster();
    k.setMetadata(meta);
    if (secret != null) {
      k.spec(
          new KubevirtCluster.Spec()
              .infraClusterSecretRef(
                  new KubevirtCluster.SecretRef().name(secret).namespace(secretNs)));
    }
    return k;
  }

  static V1ObjectReference kvcRef(String ns, String name) {
    return new V1ObjectReference()
        .apiVersion("infrastructure.cluster.x-k8s.io/v1alpha1")
        .kind("KubevirtCluster")
        .namespace(ns)
        .name(name)
        .uid("uid-" + name);
  }

  static Map<String, byte[]> secret(String kubeconfig, String namespace) {
    Map<String, byte[]> data = new HashMap<>();
    if (kubeconfig != null) {
      data.put("kubeconfig", kubeconfig.getBytes(StandardCharsets.UTF_8));
    }
    if (namespace != null) {
      data.put("namespace", namespace.getBytes(StandardCharsets.UTF_8));
    }
    return data;
  }

  static InfraBindings bind(List<KubevirtCluster> kvcs, Map<SecretRef, Map<String, byte[]>> s) {
    return InfraBindings.of(kvcs, r -> Optional.ofNullable(s.get(r)), false);
  }

  @Test
  void twoTenantsWithTheSameKubeconfigShareOneConnectionEachInItsNamespace() {
    InfraBindings b =
        bind(
            List.of(
                kvc("tenant-a", "a", "a", null, "infra"),
                kvc("tenant-b", "b", "b", "shared", "infra-copy")),
            Map.of(
                new SecretRef("tenant-a", "infra"), secret(KUBECONFIG_1, null),
                new SecretRef("shared", "infra-copy"), secret(KUBECONFIG_1, "vms-b")));
    assertEquals(1, b.connections().size());
    String id = b.connections().keySet().iterator().next();
    assertEquals(
        Map.of(
            new Target(id, "tenant-a"), Set.of(new GuestClusterRef("tenant-a", "a")),
            new Target(id, "vms-b"), Set.of(new GuestClusterRef("tenant-b", "b"))),
        b.targets().entrySet().stream()
            .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().clusters())));
    assertEquals(List.of(), b.problems());
    assertFalse(id.contains("token"), "an id, not the content");
  }

  @Test
  void twoKubevirtClustersInOneInfraNamespaceAreBoundTogether() {
    InfraBindings b =
        bind(
            List.of(kvc("a", "one", "one", null, "s"), kvc("b", "two", "two", null, "s")),
            Map.of(
                new SecretRef("a", "s"), secret(KUBECONFIG_1, "vms"),
                new SecretRef("b", "s"), secret(KUBECONFIG_1, "vms")));
    assertEquals(1, b.targets().size());
    InfraBindings.Bound bound = b.targets().values().iterator().next();
    assertEquals(
        Set.of(new GuestClusterRef("a", "one"), new GuestClusterRef("b", "two")), bound.clusters());
    assertEquals(List.of(kvcRef("a", "one"), kvcRef("b", "two")), bound.kubevirtClusters());
  }

  @Test
  void kubeconfigsThatDifferOnlyInNamesShareAConnectionThoseWithOtherCredentialsDoNot() {
    String renamed =
        KUBECONFIG_1
                .replace("name: c\n", "name: infra\n")
                .replace("cluster: c,", "cluster: infra,")
                .replace("- name: x", "- name: other-context")
                .replace("current-context: x", "current-context: other-context")
            + "# rotated by the tenant's tooling\n";
    String otherToken = KUBECONFIG_1.replace("token-1", "token-3");
    assertEquals(InfraBindings.connectionKey(KUBECONFIG_1), InfraBindings.connectionKey(renamed));
    assertFalse(
        InfraBindings.connectionKey(KUBECONFIG_1).equals(InfraBindings.connectionKey(otherToken)));
  }

  @Test
  void theInfraClusterKeyIsAShortDnsLabelSharedByOtherCredentialsForTheSameServerOnly() {
    String key = InfraBindings.infraClusterKey(KUBECONFIG_1);
    assertTrue(key.matches("[0-9a-f]{16}"), key);
    assertEquals(key, InfraBindings.infraClusterKey(KUBECONFIG_1.replace("token-1", "token-3")));
    assertFalse(key.equals(InfraBindings.infraClusterKey(KUBECONFIG_2)));
    assertFalse(key.contains("token"), "a digest, not the content");
  }

  @Test
  void differentKubeconfigsAreDifferentConnectionsAndARotatedOneANewId() {
    SecretRef ref = new SecretRef("a", "s");
    List<KubevirtCluster> kvcs = List.of(kvc("a", "one", "one", null, "s"));
    String before =
        bind(kvcs, Map.of(ref, secret(KUBECONFIG_1, null)))
            .connections()
            .keySet()
            .iterator()
            .next();
    String after =
        bind(kvcs, Map.of(ref, secret(KUBECONFIG_2, null)))
            .connections()
            .keySet()
            .iterator()
            .next();
    assertFalse(before.equals(after));
  }

  /** One row: a KubevirtCluster that cannot be bound, and the reason and words of its problem. */
  record Row(KubevirtCluster kvc, Map<String, byte[]> secret, String reason, String says) {}

  @Test
  void kubevirtClustersThatCannotBeBoundEachGetOneProblemWithoutSecretContent() {
    List<Row> rows =
        List.of(
            new Row(
                kvc("a", "k", null, null, "s"),
                secret(KUBECONFIG_1, null),
                "ClusterOwnerMissing",
                "no owner reference"),
            new Row(
                kvc("a", "k", "k", null, "s"),
                null,
                "InfraSecretInvalid",
                "infra Secret a/s of KubevirtCluster a/k not found"),
            new Row(
                kvc("a", "k", "k", null, "s"),
                secret(null, "vms"),
                "InfraSecretInvalid",
                "has no 'kubeconfig' key"),
            new Row(
                kvc("a", "k", "k", null, "s"),
                secret(KUBECONFIG_1.replace("token: token-1", "tokenFile: /var/run/x"), null),
                "InfraSecretInvalid",
                "tokenFile"),
            new Row(
                kvc("a", "k", "k", null, "s"),
                secret(
                    KUBECONFIG_1.replace(
                        "certificate-authority-data: Q0E=", "insecure-skip-tls-verify: true"),
                    null),
                "InfraSecretInvalid",
                "insecure-skip-tls-verify"),
            new Row(
                kvc("a", "k", "k", null, "s"),
                secret("{not: [valid", null),
                "InfraSecretInvalid",
                "not valid YAML"),
            new Row(
                kvc("a", "k", "k", null, "s"),
                secret(KUBECONFIG_1, "Not_A_Namespace"),
                "InfraSecretInvalid",
                "key 'namespace' is not a namespace name"));
    for (Row row : rows) {
      Map<SecretRef, Map<String, byte[]>> secrets = new HashMap<>();
      if (row.secret() != null) {
        secrets.put(new SecretRef("a", "s"), row.secret());
      }
      InfraBindings b = bind(List.of(row.kvc()), secrets);
      assertEquals(Map.of(), b.targets(), row.says());
      assertEquals(1, b.problems().size(), row.says());
      InfraBindings.Problem p = b.problems().get(0);
      assertEquals(row.reason(), p.reason(), row.says());
      assertTrue(p.message().contains(row.says()), p.message());
      assertFalse(
          p.message().contains("token-1") || p.message().contains("infra-1.example"), p.message());
    }
  }

  @Test
  void aSecretThatCouldNotBeReadIsAProblemOfItsKubevirtClustersOnly() {
    SecretRef refused = new SecretRef("b", "s");
    InfraBindings b =
        InfraBindings.of(
            List.of(kvc("a", "k", "k", null, "s"), kvc("b", "l", "l", null, "s")),
            r -> {
              if (r.equals(refused)) {
                throw new InfraBindings.Unreadable("not allowed (HTTP 403)");
              }
              return Optional.of(secret(KUBECONFIG_1, null));
            },
            false);
    assertEquals(1, b.targets().size(), "the readable one is bound");
    assertEquals(
        List.of(
            new InfraBindings.Problem(
                kvcRef("b", "l"),
                "InfraSecretInvalid",
                "infra Secret b/s of KubevirtCluster b/l could not be read: not allowed (HTTP 403)")),
        b.problems());
  }

  @Test
  void aKubevirtClusterWithoutInfraSecretRefIsNotExternalAndNoProblem() {
    InfraBindings b = bind(List.of(kvc("a", "k", "k", null, null)), Map.of());
    assertEquals(Map.of(), b.targets());
    assertEquals(List.of(), b.problems());
    assertEquals(
        Set.of(), InfraBindings.referencedSecrets(List.of(kvc("a", "k", "k", null, null))));
  }

  @Test
  void theSecretNamespaceDefaultsToTheKubevirtClusters() {
    assertEquals(
        Set.of(new SecretRef("a", "s"), new SecretRef("other", "t")),
        InfraBindings.referencedSecrets(
            List.of(kvc("a", "k", "k", null, "s"), kvc("a", "l", "l", "other", "t"))));
  }

  @Test
  void aTlsRelaxingKubeconfigIsAcceptedOnlyWithTheOperatorsFlag() {
    String insecure =
        KUBECONFIG_1.replace("certificate-authority-data: Q0E=", "insecure-skip-tls-verify: true");
    InfraBindings b =
        InfraBindings.of(
            List.of(kvc("a", "k", "k", null, "s")), r -> Optional.of(secret(insecure, null)), true);
    assertEquals(1, b.targets().size());
    assertTrue(b.connections().values().iterator().next().allowsInsecureTls());
  }
}
