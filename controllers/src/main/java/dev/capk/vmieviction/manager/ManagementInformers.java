package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.Machine;
import dev.capk.vmieviction.api.capk.CapkApi;
import dev.capk.vmieviction.api.capk.KubevirtCluster;
import dev.capk.vmieviction.api.capk.KubevirtClusterList;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.InfraVmis;
import dev.capk.vmieviction.eviction.MachineContractCheck;
import dev.capk.vmieviction.kube.WatchListApi;
import dev.capk.vmieviction.logging.InformerFailures;
import dev.capk.vmieviction.workload.CachedObjects;
import dev.capk.vmieviction.workload.GuestClusterRef;
import dev.capk.vmieviction.workload.ManagementApis;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * Informers on the Cluster API objects behind VMIs (Clusters, Machines, KubevirtMachines; with
 * external infra, KubevirtClusters too) and on the tenant kubeconfig Secrets (only those Cluster
 * API labels, never every Secret), one per watched namespace (or one for all), each object trimmed
 * to what its readers use; and each pipeline's VMI informers ({@link #vmis}).
 *
 * <p>Only an optimisation, so not part of readiness (except KubevirtClusters, which cannot be read
 * otherwise): a cache that has not synced or lacks the object answers empty and the reader GETs, so
 * RBAC without list/watch on these kinds still evacuates. A list refused with 403 is tried again
 * every {@link #REFUSED_LIST_PAUSE}; other failures back off ({@link InformerFailures}).
 */
public final class ManagementInformers {

  public static final String ALL = ""; // all namespaces

  /** The VMI informers' index of VMIs by the name of their tenant Cluster (label). */
  static final String CLUSTER_INDEX = "capk-cluster";

  static final Duration REFUSED_LIST_PAUSE = Duration.ofMinutes(5);

  /** The annotations MachineContractCheck reads. */
  static final List<String> KEPT_ANNOTATIONS =
      List.of(
          ClusterApi.PAUSED_ANNOTATION,
          ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION,
          ClusterApi.LIVE_MIGRATION_ANNOTATION,
          ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION,
          EvictionAnnotations.CAPK_DELETION_GRACE_TIME);

  private final Kind<Cluster> clusters = Kind.management(Cluster.class);
  private final Kind<Machine> machines = Kind.management(Machine.class);
  private final Kind<KubevirtMachine> kubevirtMachines = Kind.management(KubevirtMachine.class);
  private final Kind<V1Secret> kubeconfigSecrets =
      Kind.of(
          V1Secret.class,
          "Secret",
          // Cluster API labels the kubeconfig Secrets it writes; RBAC cannot select by label.
          new ListOptions().labelSelector(CapkLabels.CLUSTER_NAME),
          ManagementInformers::trimSecret);
  private final Kind<KubevirtCluster> kubevirtClusters = Kind.management(KubevirtCluster.class);
  private final Set<Consumer<GuestClusterRef>> kubeconfigListeners = ConcurrentHashMap.newKeySet();

  /** {@code watchClient}: without read timeout; {@code namespaces}: none, all. */
  public ManagementInformers(
      ApiClient watchClient,
      String clusterApiVersion,
      List<String> namespaces,
      boolean withKubevirtClusters) {
    clusters.addEach(
        watchClient, namespaces, ManagementApis.clusters(watchClient, clusterApiVersion));
    machines.addEach(
        watchClient, namespaces, ManagementApis.machines(watchClient, clusterApiVersion));
    kubevirtMachines.addEach(watchClient, namespaces, ManagementApis.kubevirtMachines(watchClient));
    kubeconfigSecrets.addEach(watchClient, namespaces, secrets(watchClient));
    if (withKubevirtClusters) {
      kubevirtClusters.addEach(
          watchClient,
          namespaces,
          new WatchListApi<>(
              KubevirtCluster.class,
              KubevirtClusterList.class,
              CapkApi.GROUP,
              CapkApi.VERSION,
              CapkApi.KUBEVIRT_CLUSTER_PLURAL,
              watchClient));
    }
    kubeconfigSecrets.onChange(this::kubeconfigChanged);
  }

  /**
   * VMIs selected by label on the server, indexed by tenant Cluster name, trimmed ({@link
   * #trimVmi}): an infra cluster may hold ten thousand.
   *
   * @param listFailed told of each failed list or watch; null: backed off and logged with a count
   */
  public static Kind<VirtualMachineInstance> vmis(
      ApiClient watchClient,
      List<String> namespaces,
      String labelSelector,
      Duration resync,
      Consumer<Throwable> listFailed) {
    Kind<VirtualMachineInstance> vmis =
        Kind.of(
            VirtualMachineInstance.class,
            "VirtualMachineInstance",
            new ListOptions().labelSelector(labelSelector),
            ManagementInformers::trimVmi);
    vmis.addEach(watchClient, namespaces, InfraVmis.api(watchClient), resync, null, listFailed);
    vmis.informers()
        .values()
        .forEach(i -> i.addIndexers(Map.of(CLUSTER_INDEX, ManagementInformers::clusterName)));
    return vmis;
  }

  private static List<String> clusterName(VirtualMachineInstance vmi) {
    V1ObjectMeta m = vmi.getMetadata();
    String cluster =
        m == null || m.getLabels() == null ? null : m.getLabels().get(CapkLabels.CLUSTER_NAME);
    return cluster == null ? List.of() : List.of(cluster);
  }

  static WatchListApi<V1Secret, V1SecretList> secrets(ApiClient client) {
    return new WatchListApi<>(V1Secret.class, V1SecretList.class, "", "v1", "secrets", client);
  }

  public CachedObjects<Cluster> clusters() {
    return clusters;
  }

  public CachedObjects<V1Secret> kubeconfigSecrets() {
    return kubeconfigSecrets;
  }

  /**
   * Until the returned stop runs, tells {@code changed} the tenant whose kubeconfig Secret changed,
   * appeared or went (never the Secret itself).
   */
  public Runnable onKubeconfigChanged(Consumer<GuestClusterRef> changed) {
    kubeconfigListeners.add(changed);
    return () -> kubeconfigListeners.remove(changed);
  }

  private void kubeconfigChanged(V1Secret secret) {
    String suffix = ClusterApi.kubeconfigSecretName("");
    String name = secret.getMetadata().getName();
    if (name != null && name.endsWith(suffix) && name.length() > suffix.length()) {
      GuestClusterRef ref =
          new GuestClusterRef(
              secret.getMetadata().getNamespace(),
              name.substring(0, name.length() - suffix.length()));
      kubeconfigListeners.forEach(l -> l.accept(ref));
    }
  }

  /** Calls {@code changed} when a KubevirtCluster is added, changed or deleted. */
  public void onKubevirtClusterChanged(Runnable changed) {
    kubevirtClusters.onChange(k -> changed.run());
  }

  public List<KubevirtCluster> kubevirtClusters() {
    return kubevirtClusters.list();
  }

  /** The three caches, as the reader of a VMI's Cluster API objects takes them. */
  public MachineContractCheck.Cached all() {
    return new MachineContractCheck.Cached(clusters, kubevirtMachines, machines);
  }

  public boolean hasSynced() {
    return kinds().allMatch(Kind::hasSynced);
  }

  private Stream<Kind<?>> kinds() {
    return Stream.of(clusters, machines, kubevirtMachines, kubeconfigSecrets, kubevirtClusters);
  }

  public List<SharedInformerFactory> factories() {
    return kinds().flatMap(k -> k.factories().stream()).toList();
  }

  public void start() {
    factories().forEach(SharedInformerFactory::startAllRegisteredInformers);
  }

  public void stop() {
    factories().forEach(f -> f.stopAllRegisteredInformers(true));
  }

  /**
   * One kind's informers by watched namespace ({@link #ALL} for all), filled by {@link #addEach}.
   */
  public record Kind<T extends KubernetesObject>(
      Class<T> type,
      String kind,
      ListOptions selectors,
      UnaryOperator<T> trim,
      Map<String, SharedIndexInformer<T>> informers,
      List<SharedInformerFactory> factories)
      implements CachedObjects<T> {

    static <T extends KubernetesObject> Kind<T> of(
        Class<T> type, String kind, ListOptions selectors, UnaryOperator<T> trim) {
      return new Kind<>(type, kind, selectors, trim, new LinkedHashMap<>(), new ArrayList<>());
    }

    /** Every object, trimmed. */
    static <T extends KubernetesObject> Kind<T> management(Class<T> type) {
      return of(type, type.getSimpleName(), new ListOptions(), ManagementInformers::trim);
    }

    /** Not resynced, a refused list paced, failures counted and backed off. */
    <L extends KubernetesListObject> void addEach(
        ApiClient client, List<String> namespaces, WatchListApi<T, L> api) {
      addEach(client, namespaces, api, Duration.ZERO, REFUSED_LIST_PAUSE, null);
    }

    /**
     * One informer per namespace ({@code namespaces} empty: all), each in a factory of its own.
     *
     * @param refusedPause how long a refused list waits; null: it is a failure as any
     * @param listFailed told of each failed list or watch (the informer tries again a second
     *     later); null: counted and backed off ({@link InformerFailures})
     */
    <L extends KubernetesListObject> void addEach(
        ApiClient client,
        List<String> namespaces,
        WatchListApi<T, L> api,
        Duration resync,
        Duration refusedPause,
        Consumer<Throwable> listFailed) {
      for (String ns : namespaces.isEmpty() ? List.of(ALL) : namespaces) {
        InformerFailures failures =
            new InformerFailures(
                "kind=" + kind + " namespace=" + (ns.isEmpty() ? "all" : ns), refusedPause);
        SharedInformerFactory factory = new SharedInformerFactory(client);
        // Told to listFailed, failures are neither counted nor backed off: lists go out at once.
        SharedIndexInformer<T> informer =
            factory.sharedIndexInformerFor(
                failures.lists(api, ns, selectors, trim),
                type,
                resync.toMillis(),
                listFailed != null ? (t, e) -> listFailed.accept(e) : failures.handler());
        informer.setTransform(o -> trim.apply(type.cast(o)));
        informers.put(ns, informer);
        factories.add(factory);
      }
    }

    public boolean hasSynced() {
      return informers.values().stream().allMatch(SharedIndexInformer::hasSynced);
    }

    void onChange(Consumer<T> changed) {
      informers.values().forEach(i -> i.addEventHandler(ManagementInformers.onChange(changed)));
    }

    public void addEventHandler(ResourceEventHandler<T> handler, Duration resync) {
      informers
          .values()
          .forEach(i -> i.addEventHandlerWithResyncPeriod(handler, resync.toMillis()));
    }

    public List<T> byIndex(String index, String key) {
      return informers.values().stream()
          .flatMap(i -> i.getIndexer().byIndex(index, key).stream())
          .toList();
    }

    List<T> list() {
      return informers.values().stream().flatMap(i -> i.getIndexer().list().stream()).toList();
    }

    @Override
    public Optional<T> find(String namespace, String name) {
      SharedIndexInformer<T> informer = informers.getOrDefault(namespace, informers.get(ALL));
      if (informer == null || !informer.hasSynced()) {
        return Optional.empty();
      }
      return Optional.ofNullable(
          new Lister<>(informer.getIndexer()).namespace(namespace).get(name));
    }
  }

  /** Calls {@code changed} on add, delete, or update to another resourceVersion (not a relist). */
  static <T extends KubernetesObject> ResourceEventHandler<T> onChange(Consumer<T> changed) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T o) {
        changed.accept(o);
      }

      @Override
      public void onUpdate(T before, T after) {
        if (!Objects.equals(
            before.getMetadata().getResourceVersion(), after.getMetadata().getResourceVersion())) {
          changed.accept(after);
        }
      }

      @Override
      public void onDelete(T o, boolean stateUnknown) {
        changed.accept(o);
      }
    };
  }

  /** Keeps only the metadata the readers use. */
  static <T extends KubernetesObject> T trim(T object) {
    V1ObjectMeta m = object.getMetadata();
    if (m != null) {
      m.setAnnotations(keep(m.getAnnotations(), KEPT_ANNOTATIONS, false));
      m.setLabels(null);
      m.setManagedFields(null);
      m.setFinalizers(null);
    }
    return object;
  }

  private static final List<String> KEPT_VMI_LABELS =
      List.of(
          CapkLabels.CLUSTER_NAME,
          CapkLabels.KUBEVIRT_MACHINE_NAME,
          CapkLabels.KUBEVIRT_MACHINE_NAMESPACE,
          CapkLabels.ROLE);

  private static final List<String> KEPT_VMI_ANNOTATIONS =
      List.of(
          EvictionAnnotations.DRAIN_START_TIME,
          EvictionAnnotations.CAPK_DELETION_GRACE_TIME,
          EvictionAnnotations.EVACUATION_ADMITTED,
          EvictionAnnotations.EVACUATION_PHASE,
          EvictionAnnotations.MIGRATION_ATTEMPT,
          EvictionAnnotations.MIGRATION_FALLBACK);

  /**
   * Keeps the VMI metadata the controller reads (identity, deletionTimestamp, the labels and
   * annotations above): the rest, managedFields first, would cost kilobytes per VMI; code that
   * needs more reads the VMI from the API. Label values are interned: thousands of VMIs name a
   * handful of clusters.
   */
  static VirtualMachineInstance trimVmi(VirtualMachineInstance vmi) {
    V1ObjectMeta m = vmi.getMetadata();
    if (m != null) {
      vmi.setMetadata(
          identity(m)
              .deletionTimestamp(m.getDeletionTimestamp())
              .labels(keep(m.getLabels(), KEPT_VMI_LABELS, true))
              .annotations(keep(m.getAnnotations(), KEPT_VMI_ANNOTATIONS, false))
              // The model starts every list empty: null costs nothing per VMI.
              .managedFields(null)
              .finalizers(null)
              .ownerReferences(null));
    }
    return vmi;
  }

  private static V1ObjectMeta identity(V1ObjectMeta m) {
    return new V1ObjectMeta()
        .name(m.getName())
        .namespace(m.getNamespace())
        .uid(m.getUid())
        .resourceVersion(m.getResourceVersion());
  }

  /** The entries of {@code all} under {@code keys}; null when none (the cheapest empty map). */
  static Map<String, String> keep(
      Map<String, String> all, List<String> keys, boolean internValues) {
    Map<String, String> kept = null;
    for (String key : keys) {
      String value = all == null ? null : all.get(key);
      if (value != null) {
        if (kept == null) {
          kept = new HashMap<>(4);
        }
        kept.put(key, internValues ? value.intern() : value);
      }
    }
    return kept;
  }

  /** Keeps a kubeconfig Secret's identity and kubeconfig (CAPI may add other keys). */
  static V1Secret trimSecret(V1Secret secret) {
    V1ObjectMeta m = secret.getMetadata();
    if (m != null) {
      secret.setMetadata(identity(m));
    }
    Map<String, byte[]> data = secret.getData();
    byte[] value = data == null ? null : data.get(ClusterApi.KUBECONFIG_SECRET_KEY);
    secret.setData(value == null ? null : Map.of(ClusterApi.KUBECONFIG_SECRET_KEY, value));
    secret.setStringData(null);
    secret.setType(null);
    return secret;
  }
}
