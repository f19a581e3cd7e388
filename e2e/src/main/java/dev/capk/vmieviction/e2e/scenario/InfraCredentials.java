package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.Pki;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The credentials an external infra cluster's Secret holds, as config/infra-rbac documents them: an
 * identity of the infra cluster with no rights but config/infra-rbac's ClusterRoles, bound by a
 * RoleBinding in each of its tenants' infra namespaces and the KubeVirt reader cluster-wide. What
 * the controller then does in that infra cluster proves those roles enough.
 */
public final class InfraCredentials {
  public static final String INFRA_ROLE = "vmi-eviction-infra";
  public static final String KUBEVIRT_READER_ROLE = "vmi-eviction-infra-kubevirt-reader";

  /** A group nothing is bound to: the user's rights are exactly its own bindings. */
  private static final String GROUP = "e2e:external-infra-credentials";

  private InfraCredentials() {}

  /** config/infra-rbac's ClusterRoles, as shipped. */
  public static Path roles() {
    return RepoPaths.root().resolve("config/infra-rbac/role.yaml");
  }

  /**
   * Installs config/infra-rbac's ClusterRoles into {@code infra}, binds them to {@code user} for
   * {@code namespaces}, and returns a kubeconfig (client certificate, credentials embedded) of that
   * user. The kubeconfig is also kept as a file of the cluster's run, so the suite's secret-leak
   * check looks for its credentials in every log.
   */
  public static String grant(LocalCluster infra, String user, List<String> namespaces) {
    infra.kubectl().runOrFail(null, "apply", "-f", roles().toString());
    StringBuilder bindings = new StringBuilder();
    for (String ns : namespaces) {
      bindings.append("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n---\n");
      bindings.append(
          """
          apiVersion: rbac.authorization.k8s.io/v1
          kind: RoleBinding
          metadata: {name: %1$s-%2$s, namespace: %3$s}
          roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %2$s}
          subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %1$s}]
          ---
          """
              .formatted(user, INFRA_ROLE, ns));
    }
    bindings.append(
        """
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata: {name: %1$s-%2$s}
        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %2$s}
        subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %1$s}]
        """
            .formatted(user, KUBEVIRT_READER_ROLE));
    infra.kubectl().apply(bindings.toString());
    String kubeconfig = infra.kubeconfigFor(user, GROUP);
    Path file = infra.dir().resolve(user + ".kubeconfig");
    try {
      Pki.write(file, kubeconfig);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
    return kubeconfig;
  }
}
