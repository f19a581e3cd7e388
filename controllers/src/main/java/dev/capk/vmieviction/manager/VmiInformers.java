package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Shared informers on VMIs, filtered on the server by label selector, one per watched namespace (or
 * one for all namespaces), each with its own factory (a factory holds one informer per type); all
 * feed the same work queue.
 *
 * <p>Memory: an infra cluster may hold ten thousand VMIs. The first list is read in pages, and
 * every VMI is trimmed before it is kept ({@link #trim}): one unpaginated list of real VMIs is tens
 * of megabytes of JSON decoded at once.
 */
public final class VmiInformers {

  /** All namespaces. */
  public static final String ALL = "";

  /** The informers' index of VMIs by the name of their tenant Cluster (label). */
  static final String CLUSTER_INDEX = "capk-cluster";

  private final List<SharedInformerFactory> factories = new ArrayList<>();
  private final ManagementInformers.Kind<VirtualMachineInstance> vmis;

  /**
   * @param namespaces empty means all
   * @param listFailed told of each failed list or watch; null: backed off and logged with a count
   */
  public VmiInformers(
      ApiClient watchClient,
      GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> api,
      List<String> namespaces,
      String labelSelector,
      Duration resync,
      Consumer<Throwable> listFailed) {
    this.vmis =
        new ManagementInformers.Kind<>(
            VirtualMachineInstance.class,
            "VirtualMachineInstance",
            new ListOptions().labelSelector(labelSelector),
            VmiInformers::trim,
            resync,
            false,
            listFailed,
            new LinkedHashMap<>());
    for (String ns : namespaces.isEmpty() ? List.of(ALL) : namespaces) {
      SharedInformerFactory factory = new SharedInformerFactory(watchClient);
      vmis.add(ns, factory, api).addIndexers(Map.of(CLUSTER_INDEX, VmiInformers::clusterName));
      factories.add(factory);
    }
  }

  /** The VMI labels the controller reads. */
  private static final List<String> KEPT_LABELS =
      List.of(
          CapkLabels.CLUSTER_NAME,
          CapkLabels.KUBEVIRT_MACHINE_NAME,
          CapkLabels.KUBEVIRT_MACHINE_NAMESPACE,
          CapkLabels.ROLE);

  /** The VMI annotations the controller reads. */
  private static final List<String> KEPT_ANNOTATIONS =
      List.of(
          EvictionAnnotations.DRAIN_START_TIME,
          EvictionAnnotations.CAPK_DELETION_GRACE_TIME,
          EvictionAnnotations.EVACUATION_ADMITTED,
          EvictionAnnotations.EVACUATION_PHASE,
          EvictionAnnotations.MIGRATION_ATTEMPT,
          EvictionAnnotations.MIGRATION_FALLBACK);

  /**
   * The cache keeps only the metadata the controller reads: identity (name, namespace, uid), the
   * resourceVersion its patches are guarded by, deletionTimestamp, and the labels and annotations
   * above (the model keeps only the spec and status fields it reads). Everything else,
   * managedFields first, would cost several kilobytes per VMI. Code that needs more must read the
   * VMI from the API. Label keys are the shared constants and their values interned: thousands of
   * VMIs name a handful of clusters.
   */
  static VirtualMachineInstance trim(VirtualMachineInstance vmi) {
    V1ObjectMeta m = vmi.getMetadata();
    if (m == null) {
      return vmi;
    }
    V1ObjectMeta kept =
        new V1ObjectMeta()
            .name(m.getName())
            .namespace(m.getNamespace())
            .uid(m.getUid())
            .resourceVersion(m.getResourceVersion())
            .deletionTimestamp(m.getDeletionTimestamp())
            .labels(keep(m.getLabels(), KEPT_LABELS, true))
            .annotations(keep(m.getAnnotations(), KEPT_ANNOTATIONS, false))
            // The model starts every list empty: null costs nothing per VMI.
            .managedFields(null)
            .finalizers(null)
            .ownerReferences(null);
    vmi.setMetadata(kept);
    return vmi;
  }

  /** The entries of {@code all} under {@code keys}; null when none (the cheapest empty map). */
  static Map<String, String> keep(
      Map<String, String> all, List<String> keys, boolean internValues) {
    if (all == null) {
      return null;
    }
    Map<String, String> kept = null;
    for (String key : keys) {
      String value = all.get(key);
      if (value != null) {
        if (kept == null) {
          kept = new HashMap<>(4);
        }
        kept.put(key, internValues ? value.intern() : value);
      }
    }
    return kept;
  }

  public void addEventHandler(
      ResourceEventHandler<VirtualMachineInstance> handler, Duration resync) {
    vmis.addEventHandler(handler, resync);
  }

  /** The cached VMI, or null (also while the cache has not synced). */
  public VirtualMachineInstance get(String namespace, String name) {
    return vmis.find(namespace, name).orElse(null);
  }

  /** The cached VMIs of tenant Cluster {@code cluster} in {@code namespace}. */
  public List<VirtualMachineInstance> ofCluster(String namespace, String cluster) {
    return named(cluster).stream()
        .filter(v -> namespace.equals(v.getMetadata().getNamespace()))
        .toList();
  }

  /** The cached VMIs labelled with tenant Cluster name {@code cluster}, in any namespace. */
  public List<VirtualMachineInstance> named(String cluster) {
    return vmis.byIndex(CLUSTER_INDEX, cluster);
  }

  private static List<String> clusterName(VirtualMachineInstance vmi) {
    V1ObjectMeta m = vmi.getMetadata();
    String cluster =
        m == null || m.getLabels() == null ? null : m.getLabels().get(CapkLabels.CLUSTER_NAME);
    return cluster == null ? List.of() : List.of(cluster);
  }

  public boolean hasSynced() {
    return vmis.hasSynced();
  }

  public List<SharedInformerFactory> factories() {
    return List.copyOf(factories);
  }
}
