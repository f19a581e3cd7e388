package dev.capk.vmieviction.infra;

import com.google.common.hash.Hashing;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.capk.KubevirtCluster;
import dev.capk.vmieviction.workload.GuestClients;
import dev.capk.vmieviction.workload.GuestClusterRef;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * What the management cluster's KubevirtClusters and their infra Secrets bind: which infra
 * connections exist (one per distinct server and credentials, identified by a digest of them, so
 * KubevirtClusters whose Secrets hold the same kubeconfig share one), which infra namespaces are
 * watched through each, and which tenant Clusters are bound to each (connection, namespace). As
 * CAPK reads it: the Secret's key {@code kubeconfig}, its optional key {@code namespace} (else the
 * KubevirtCluster's namespace), the Cluster from the KubevirtCluster's owner reference. A
 * KubevirtCluster that cannot be used yields a {@link Problem} instead. Pure: the Secrets are
 * looked up through a function.
 *
 * @param connections connection id to its kubeconfig (YAML)
 * @param targets (connection, infra namespace) to what is bound there
 * @param problems the KubevirtClusters that could not be bound, and why (never a Secret's content)
 */
public record InfraBindings(
    Map<String, Connection> connections, Map<Target, Bound> targets, List<Problem> problems) {

  public record SecretRef(String namespace, String name) {
    @Override
    public String toString() {
      return namespace + "/" + name;
    }
  }

  /**
   * One infra cluster's credentials: {@code kubeconfig} is secret, never logged; the {@code
   * secrets} that hold it name the connection in logs and events.
   *
   * @param allowsInsecureTls the kubeconfig relaxes TLS (accepted only with the operator's flag)
   * @param infraCluster the infra cluster's key ({@link #infraClusterKey}): connections with other
   *     credentials to the same cluster share it
   */
  public record Connection(
      String id,
      String kubeconfig,
      boolean allowsInsecureTls,
      Set<SecretRef> secrets,
      String infraCluster) {
    /** By the Secrets that lead to it, never by content. */
    public String displayName() {
      SecretRef first = secrets.iterator().next();
      return "infra Secret "
          + first
          + (secrets.size() > 1 ? " (and " + (secrets.size() - 1) + " more)" : "");
    }

    @Override
    public String toString() {
      return displayName();
    }
  }

  /** Where VMIs are watched: an infra connection and one namespace in that infra cluster. */
  public record Target(String connectionId, String namespace) {}

  /**
   * What is bound to a target: the tenant Clusters whose VMIs may run there, and the
   * KubevirtClusters that bind them, in name order (where the target's problems are reported).
   */
  public record Bound(Set<GuestClusterRef> clusters, List<V1ObjectReference> kubevirtClusters) {}

  /** A Secret that could not be read now (no answer, 5xx, 403): not an answer, read again later. */
  public static final class Unreadable extends RuntimeException {
    public Unreadable(String message) {
      super(message, null, false, false);
    }
  }

  /** A KubevirtCluster that is not bound now; {@code reason} is its Warning Event's reason. */
  public record Problem(V1ObjectReference kubevirtCluster, String reason, String message) {
    /**
     * The Secret named by {@code spec.infraClusterSecretRef} is missing, has no {@code kubeconfig}
     * key, or holds a kubeconfig the policy refuses; the message says which, never its content.
     */
    public static final String INFRA_SECRET_INVALID = "InfraSecretInvalid";

    /** The infra cluster's API server does not answer the VMI watch (list/watch failing). */
    public static final String INFRA_CLUSTER_UNREACHABLE = "InfraClusterUnreachable";

    /** The KubevirtCluster has no owner reference to a Cluster API Cluster yet: not used. */
    public static final String CLUSTER_OWNER_MISSING = "ClusterOwnerMissing";
  }

  public InfraBindings {
    connections = Map.copyOf(connections);
    targets = Map.copyOf(targets);
    problems = List.copyOf(problems);
  }

  /** The Secret a KubevirtCluster names, its namespace defaulted; empty when it names none. */
  public static Optional<SecretRef> secretOf(KubevirtCluster kvc) {
    KubevirtCluster.SecretRef ref =
        kvc.getSpec() == null ? null : kvc.getSpec().getInfraClusterSecretRef();
    if (ref == null || ref.getName() == null || ref.getName().isBlank()) {
      return Optional.empty();
    }
    String ns =
        ref.getNamespace() == null || ref.getNamespace().isBlank()
            ? kvc.getMetadata().getNamespace()
            : ref.getNamespace();
    return Optional.of(new SecretRef(ns, ref.getName()));
  }

  public static Set<SecretRef> referencedSecrets(Collection<KubevirtCluster> kubevirtClusters) {
    Set<SecretRef> out = new LinkedHashSet<>();
    kubevirtClusters.forEach(k -> secretOf(k).ifPresent(out::add));
    return out;
  }

  /**
   * @param secretData a Secret's data, empty when it does not exist; throws {@link Unreadable} when
   *     it could not be read (never seen, and the last read failed or was refused)
   * @param allowInsecureTls the operator accepts kubeconfigs that relax TLS
   */
  public static InfraBindings of(
      Collection<KubevirtCluster> kubevirtClusters,
      Function<SecretRef, Optional<Map<String, byte[]>>> secretData,
      boolean allowInsecureTls) {
    Map<String, Connection> connections = new TreeMap<>();
    Map<Target, Bound> targets = new LinkedHashMap<>();
    List<Problem> problems = new ArrayList<>();
    for (KubevirtCluster kvc : sorted(kubevirtClusters)) {
      Binding b = bind(kvc, secretData, allowInsecureTls, problems);
      if (b == null) {
        continue;
      }
      String id = connectionKey(b.kubeconfig());
      connections
          .computeIfAbsent(
              id,
              k ->
                  new Connection(
                      k,
                      b.kubeconfig(),
                      allowInsecureTls
                          && !GuestClients.kubeconfigViolations(b.kubeconfig(), false).isEmpty(),
                      new LinkedHashSet<>(),
                      infraClusterKey(b.kubeconfig())))
          .secrets()
          .add(b.secret());
      Bound bound =
          targets.computeIfAbsent(
              new Target(id, b.namespace()),
              t ->
                  new Bound(
                      new TreeSet<>(Comparator.comparing(Object::toString)), new ArrayList<>()));
      bound.clusters().add(new GuestClusterRef(b.ref().getNamespace(), b.cluster()));
      bound.kubevirtClusters().add(b.ref());
    }
    return new InfraBindings(connections, targets, problems);
  }

  private record Binding(
      V1ObjectReference ref,
      SecretRef secret,
      String cluster,
      String kubeconfig,
      String namespace) {}

  /** Null when the KubevirtCluster names no Secret, or cannot be used (its problem added). */
  private static Binding bind(
      KubevirtCluster kvc,
      Function<SecretRef, Optional<Map<String, byte[]>>> secretData,
      boolean allowInsecureTls,
      List<Problem> problems) {
    Optional<SecretRef> secret = secretOf(kvc);
    if (secret.isEmpty()) {
      return null; // its VMIs run in the management cluster: not external infra
    }
    V1ObjectMeta meta = kvc.getMetadata();
    V1ObjectReference ref =
        new V1ObjectReference()
            .apiVersion(CapkApi.GROUP + "/" + CapkApi.VERSION)
            .kind(CapkApi.KUBEVIRT_CLUSTER_KIND)
            .namespace(meta.getNamespace())
            .name(meta.getName())
            .uid(meta.getUid());
    String kvcName = meta.getNamespace() + "/" + meta.getName();
    Optional<String> cluster = ownerCluster(meta);
    if (cluster.isEmpty()) {
      return refuse(
          problems,
          new Problem(
              ref,
              Problem.CLUSTER_OWNER_MISSING,
              ("KubevirtCluster %s has no owner reference to a Cluster (%s): its infra cluster"
                      + " is not used until Cluster API sets it")
                  .formatted(kvcName, ClusterApi.GROUP)));
    }
    String what = "infra Secret " + secret.get() + " of KubevirtCluster " + kvcName;
    Optional<Map<String, byte[]>> data;
    try {
      data = secretData.apply(secret.get());
    } catch (Unreadable e) {
      return refuse(problems, invalid(ref, what + " could not be read: " + e.getMessage()));
    }
    if (data.isEmpty()) {
      return refuse(problems, invalid(ref, what + " not found"));
    }
    byte[] raw = data.get().get(CapkApi.INFRA_SECRET_KUBECONFIG_KEY);
    if (raw == null || raw.length == 0) {
      return refuse(
          problems,
          invalid(ref, what + " has no '" + CapkApi.INFRA_SECRET_KUBECONFIG_KEY + "' key"));
    }
    String kubeconfig = new String(raw, StandardCharsets.UTF_8);
    List<String> violations = GuestClients.kubeconfigViolations(kubeconfig, allowInsecureTls);
    if (!violations.isEmpty()) {
      return refuse(
          problems, invalid(ref, what + ": kubeconfig refused: " + String.join("; ", violations)));
    }
    byte[] nsRaw = data.get().get(CapkApi.INFRA_SECRET_NAMESPACE_KEY);
    String namespace =
        nsRaw == null || nsRaw.length == 0
            ? meta.getNamespace()
            : new String(nsRaw, StandardCharsets.UTF_8).trim();
    if (!namespace.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?") || namespace.length() > 63) {
      return refuse(
          problems,
          invalid(
              ref,
              what + ": key '" + CapkApi.INFRA_SECRET_NAMESPACE_KEY + "' is not a namespace name"));
    }
    return new Binding(ref, secret.get(), cluster.get(), kubeconfig, namespace);
  }

  private static Problem invalid(V1ObjectReference ref, String message) {
    return new Problem(ref, Problem.INFRA_SECRET_INVALID, message);
  }

  private static Binding refuse(List<Problem> problems, Problem problem) {
    problems.add(problem);
    return null;
  }

  /** The Cluster API Cluster among the owners, as CAPK's util.GetOwnerCluster finds it. */
  static Optional<String> ownerCluster(V1ObjectMeta meta) {
    List<V1OwnerReference> owners = meta == null ? null : meta.getOwnerReferences();
    return Stream.ofNullable(owners)
        .flatMap(List::stream)
        .filter(o -> ClusterApi.CLUSTER_KIND.equals(o.getKind()))
        .filter(
            o -> o.getApiVersion() != null && o.getApiVersion().startsWith(ClusterApi.GROUP + "/"))
        .map(V1OwnerReference::getName)
        .filter(n -> n != null && !n.isBlank())
        .findFirst();
  }

  private static List<KubevirtCluster> sorted(Collection<KubevirtCluster> all) {
    return all.stream()
        .filter(k -> k.getMetadata() != null)
        .sorted(
            Comparator.comparing(
                (KubevirtCluster k) ->
                    k.getMetadata().getNamespace() + "/" + k.getMetadata().getName()))
        .toList();
  }

  /**
   * The id of the connection a kubeconfig makes: a SHA-256 of what the connection depends on, the
   * current context's cluster (server, CA, TLS fields) and user (credentials), so that kubeconfigs
   * that differ only in names, comments or other contexts share one connection. A kubeconfig whose
   * current context cannot be followed is identified by its whole content.
   */
  static String connectionKey(String kubeconfig) {
    Map<?, ?>[] parts = clusterAndUser(kubeconfig);
    return parts == null
        ? sha256(kubeconfig)
        : sha256("cluster\n" + new TreeMap<>(parts[0]) + "\nuser\n" + new TreeMap<>(parts[1]));
  }

  /**
   * The key of the infra cluster a kubeconfig reaches, the same on every replica and a DNS label
   * (it names a Lease): 16 hex digits of a SHA-256 of the current context's cluster entry (server,
   * CA, TLS fields) alone, so kubeconfigs with other credentials for the same cluster share it; of
   * the connection's key when the current context cannot be followed.
   */
  public static String infraClusterKey(String kubeconfig) {
    Map<?, ?>[] parts = clusterAndUser(kubeconfig);
    String digest =
        parts == null ? connectionKey(kubeconfig) : sha256("cluster\n" + new TreeMap<>(parts[0]));
    return digest.substring(0, 16);
  }

  /** The current context's cluster and user bodies; null when they cannot be followed. */
  private static Map<?, ?>[] clusterAndUser(String kubeconfig) {
    try {
      if (GuestClients.yaml(kubeconfig) instanceof Map<?, ?> config) {
        Map<?, ?> context = named(config.get("contexts"), config.get("current-context"), "context");
        if (context != null) {
          Map<?, ?> cluster = named(config.get("clusters"), context.get("cluster"), "cluster");
          Map<?, ?> user = named(config.get("users"), context.get("user"), "user");
          if (cluster != null && user != null) {
            return new Map<?, ?>[] {cluster, user};
          }
        }
      }
    } catch (RuntimeException e) {
      // Not YAML (checked before: cannot happen), or keys that are not all strings.
    }
    return null;
  }

  /** The {@code kind} body of the entry {@code name} of a kubeconfig's list. */
  private static Map<?, ?> named(Object entries, Object name, String kind) {
    if (!(entries instanceof List<?> list) || name == null) {
      return null;
    }
    for (Object entry : list) {
      if (entry instanceof Map<?, ?> e
          && name.equals(e.get("name"))
          && e.get(kind) instanceof Map<?, ?> body) {
        return body;
      }
    }
    return null;
  }

  private static String sha256(String text) {
    return Hashing.sha256().hashString(text, StandardCharsets.UTF_8).toString();
  }
}
