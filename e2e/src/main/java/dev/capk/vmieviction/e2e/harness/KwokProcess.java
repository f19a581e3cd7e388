package dev.capk.vmieviction.e2e.harness;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Starts kwok, the kubelet stand-in, against one API server. It manages only the nodes annotated
 * {@code kwok.x-k8s.io/node=<value>}, so it never touches a real node, nor the nodes of another
 * kwok that selects another value on the same cluster.
 */
final class KwokProcess {
  private static final int START_ATTEMPTS = 3;

  private KwokProcess() {}

  static ManagedProcess start(
      KubeBinaries binaries, Path kubeconfig, String annotationValue, Path log) {
    for (int attempt = 1; ; attempt++) {
      int port = FreePorts.next();
      ManagedProcess p =
          ManagedProcess.start(
              "kwok",
              List.of(
                  binaries.path("kwok").toString(),
                  "--kubeconfig=" + kubeconfig,
                  "--manage-all-nodes=false",
                  "--manage-nodes-with-annotation-selector="
                      + KwokNodes.MANAGED_ANNOTATION
                      + "="
                      + annotationValue,
                  "--manage-nodes-with-label-selector=",
                  "--manage-single-node=",
                  "--cidr=10.0.0.0/16",
                  "--node-ip=10.0.0.1",
                  "--node-lease-duration-seconds=40",
                  "--server-address=127.0.0.1:" + port),
              log,
              Map.of());
      try {
        ComponentHealth.await(
            p, () -> ComponentHealth.httpOk("http://127.0.0.1:" + port + "/healthz"));
        return p;
      } catch (IllegalStateException e) {
        boolean retry = ComponentHealth.portCollision(p) && attempt < START_ATTEMPTS;
        p.stop(Duration.ofSeconds(5));
        if (!retry) {
          throw e;
        }
      }
    }
  }
}
