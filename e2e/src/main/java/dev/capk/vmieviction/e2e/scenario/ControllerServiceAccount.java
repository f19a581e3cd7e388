package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.Pki;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The controller's own identity, as deployed: the ServiceAccount and RBAC of config/default
 * (rendered with the real kubectl's kustomize; the Deployment and Service are left out, the
 * controller runs from its jar here), and a kubeconfig with a token of that ServiceAccount.
 */
public final class ControllerServiceAccount {
  public static final String NAMESPACE = "capk-vmi-eviction-system";
  public static final String NAME = "capk-vmi-eviction-controller";
  public static final String CLUSTER_ROLE = "capk-vmi-eviction-controller";

  private ControllerServiceAccount() {}

  /**
   * Installs config/default's RBAC into {@code infra} and returns a kubeconfig file authenticating
   * as the ServiceAccount.
   */
  public static Path install(KubeCluster infra) {
    String rendered =
        infra
            .kubectl()
            .runOrFail(null, "kustomize", RepoPaths.root().resolve("config/default").toString());
    String withoutWorkloads =
        Arrays.stream(rendered.split("(?m)^---\\s*$"))
            .filter(
                doc ->
                    !doc.contains("\nkind: Deployment")
                        && !doc.startsWith("kind: Deployment")
                        && !doc.contains("\nkind: Service\n")
                        && !doc.startsWith("kind: Service\n"))
            .collect(Collectors.joining("\n---\n"));
    infra.kubectl().apply(withoutWorkloads);
    return kubeconfig(infra, NAMESPACE, NAME);
  }

  /**
   * A kubeconfig file authenticating as ServiceAccount {@code namespace/name} (a token, as a pod of
   * that ServiceAccount has mounted): what a controller started as a local process uses to run with
   * exactly the rights RBAC gives that ServiceAccount.
   */
  public static Path kubeconfig(KubeCluster infra, String namespace, String name) {
    String token =
        infra
            .kubectl()
            .runOrFail(null, "-n", namespace, "create", "token", name, "--duration=2h")
            .strip();
    Path file = infra.dir().resolve(namespace + "-" + name + "-sa.kubeconfig");
    try {
      Pki.write(
          file,
          infra.kubeconfigWithToken("system:serviceaccount:" + namespace + ":" + name, token));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
    return file;
  }
}
