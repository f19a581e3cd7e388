package dev.capk.vmieviction.e2e.harness;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Where the end-to-end scenarios get their clusters, chosen with {@code -Dcapk.e2e.backend}:
 *
 * <ul>
 *   <li>{@code local} (default): local control planes this harness starts;
 *   <li>{@code k3s}: one k3s container per cluster (Testcontainers; needs a Docker engine);
 *   <li>{@code kubeconfig}: clusters that already run (e.g. kind), one admin kubeconfig per cluster
 *       role, {@code -Dcapk.e2e.kubeconfig.<role>=<file>}; {@code -Dcapk.e2e.webhookHost} is how
 *       their API servers reach this machine (default 127.0.0.1).
 * </ul>
 */
public enum ClusterBackend {
  LOCAL,
  K3S,
  KUBECONFIG;

  public static final String PROPERTY = "capk.e2e.backend";

  /** The backend the run asked for. */
  public static ClusterBackend selected() {
    String v = System.getProperty(PROPERTY, "local").trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "", "local" -> LOCAL;
      case "k3s" -> K3S;
      case "kubeconfig", "kind" -> KUBECONFIG;
      default ->
          throw new IllegalArgumentException(
              "-D" + PROPERTY + "=" + v + ": unknown backend; use local, k3s or kubeconfig");
    };
  }

  /**
   * Why this backend cannot give clusters on this machine (the tests are then skipped), or empty.
   */
  public Optional<String> unavailableReason(String role) {
    return switch (this) {
      case LOCAL -> Optional.empty();
      case K3S -> K3sCluster.unavailableReason().map(r -> "k3s backend: " + r);
      case KUBECONFIG ->
          System.getProperty(kubeconfigProperty(role), "").isBlank()
              ? Optional.of(
                  "kubeconfig backend: no kubeconfig for cluster "
                      + role
                      + "; set -D"
                      + kubeconfigProperty(role)
                      + "=<file>")
              : Optional.empty();
    };
  }

  /** Starts (or connects to) the cluster of {@code role}; {@code localShape} shapes a local one. */
  public KubeCluster start(String role, UnaryOperator<LocalCluster.Builder> localShape) {
    return switch (this) {
      case LOCAL -> localShape.apply(LocalCluster.builder(role)).start();
      case K3S -> K3sCluster.start(role);
      case KUBECONFIG ->
          ExistingCluster.fromKubeconfig(
              role,
              Path.of(System.getProperty(kubeconfigProperty(role))),
              System.getProperty("capk.e2e.webhookHost", "127.0.0.1"));
    };
  }

  public static String kubeconfigProperty(String role) {
    return "capk.e2e.kubeconfig." + role;
  }
}
