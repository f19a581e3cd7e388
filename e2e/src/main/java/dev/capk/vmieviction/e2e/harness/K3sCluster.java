package dev.capk.vmieviction.e2e.harness;

import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.Testcontainers;
import org.testcontainers.k3s.K3sContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A k3s cluster in a container (Testcontainers), for machines with a Docker engine. k3s brings its
 * own scheduler and controller-manager; the harness adds its kwok for the scenario's nodes, as for
 * any {@link ExistingCluster}, and makes this JVM's webhook ports reachable from the container.
 */
public final class K3sCluster implements KubeCluster {
  private static final Pattern IMAGE = Pattern.compile("(?m)^K3S_IMAGE=(\\S+)$");

  private final K3sContainer container;
  private final ExistingCluster cluster;

  private K3sCluster(String name, K3sContainer container) {
    this.container = container;
    ExistingCluster c;
    try {
      c =
          ExistingCluster.fromKubeconfigYaml(
              name, container.getKubeConfigYaml(), "host.testcontainers.internal");
    } catch (RuntimeException e) {
      container.stop();
      throw e;
    }
    this.cluster = c;
  }

  /** Why k3s cannot start here, or empty when a Docker engine answers. */
  public static Optional<String> unavailableReason() {
    try {
      if (DockerClientFactory.instance().isDockerAvailable()) {
        return Optional.empty();
      }
      return Optional.of(
          "no Docker engine answers on this machine (DOCKER_HOST, /var/run/docker.sock)");
    } catch (RuntimeException e) {
      return Optional.of("no Docker engine answers on this machine: " + e.getMessage());
    }
  }

  /** Starts a k3s container called {@code name} from the pinned image (or -Dcapk.e2e.k3sImage). */
  public static K3sCluster start(String name) {
    K3sContainer container =
        new K3sContainer(DockerImageName.parse(image()).asCompatibleSubstituteFor("rancher/k3s"))
            .withAccessToHost(true);
    container.start();
    System.out.printf("harness: k3s cluster %s started from %s%n", name, image());
    return new K3sCluster(name, container);
  }

  static String image() {
    String configured = System.getProperty("capk.e2e.k3sImage");
    if (configured != null && !configured.isBlank()) {
      return configured;
    }
    try {
      Matcher m = IMAGE.matcher(Files.readString(RepoPaths.root().resolve("hack/versions.env")));
      if (m.find()) {
        return m.group(1);
      }
      throw new IllegalStateException("hack/versions.env names no K3S_IMAGE");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read hack/versions.env", e);
    }
  }

  @Override
  public String name() {
    return cluster.name();
  }

  @Override
  public String serverUrl() {
    return cluster.serverUrl();
  }

  @Override
  public String caCertificatePem() {
    return cluster.caCertificatePem();
  }

  @Override
  public Path kubeconfig() {
    return cluster.kubeconfig();
  }

  @Override
  public String adminKubeconfigYaml() {
    return cluster.adminKubeconfigYaml();
  }

  @Override
  public Path dir() {
    return cluster.dir();
  }

  @Override
  public Kubectl kubectl() {
    return cluster.kubectl();
  }

  @Override
  public KwokNodes kwokNodes() {
    return cluster.kwokNodes();
  }

  @Override
  public ApiClient client() {
    return cluster.client();
  }

  @Override
  public ApiClient informerClient() {
    return cluster.informerClient();
  }

  @Override
  public String callbackHost() {
    return cluster.callbackHost();
  }

  /**
   * The container reaches this machine through Testcontainers' port forwarder, whose tunnel ends on
   * loopback here.
   */
  @Override
  public boolean callbacksArriveOnLoopback() {
    return true;
  }

  @Override
  public void exposeLocalPort(int localPort) {
    Testcontainers.exposeHostPorts(localPort);
  }

  @Override
  public void close() {
    try {
      cluster.close();
    } finally {
      container.stop();
    }
  }
}
