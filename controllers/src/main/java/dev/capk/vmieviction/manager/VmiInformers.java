package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstanceList;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shared informers on VMIs, filtered on the server by label selector, one per watched namespace
 * (or one for all namespaces).
 *
 * <p>Where the client falls short: {@code SharedInformerFactory.sharedIndexInformerFor(
 * GenericKubernetesApi, ...)} has no label selector, and a factory holds one informer per type.
 * So the list/watch is our own small {@link ListerWatcher} (adding the selector) and each
 * namespace gets its own factory; all informers feed the same work queue.
 */
public final class VmiInformers {

  /** All namespaces. */
  public static final String ALL = "";

  private final Map<String, SharedInformerFactory> factories = new LinkedHashMap<>();
  private final Map<String, SharedIndexInformer<VirtualMachineInstance>> informers = new LinkedHashMap<>();

  /**
   * @param watchClient an ApiClient whose read timeout is zero (watches are long requests)
   * @param namespaces the namespaces to watch; empty means all
   */
  public VmiInformers(
      ApiClient watchClient,
      GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> api,
      List<String> namespaces,
      String labelSelector,
      Duration resync) {
    List<String> scopes = namespaces.isEmpty() ? List.of(ALL) : List.copyOf(namespaces);
    for (String ns : scopes) {
      SharedInformerFactory factory = new SharedInformerFactory(watchClient);
      SharedIndexInformer<VirtualMachineInstance> informer =
          factory.sharedIndexInformerFor(
              listerWatcher(api, ns, labelSelector), VirtualMachineInstance.class, resync.toMillis());
      factories.put(ns, factory);
      informers.put(ns, informer);
    }
  }

  static ListerWatcher<VirtualMachineInstance, VirtualMachineInstanceList> listerWatcher(
      GenericKubernetesApi<VirtualMachineInstance, VirtualMachineInstanceList> api,
      String namespace,
      String labelSelector) {
    return new ListerWatcher<>() {
      @Override
      public VirtualMachineInstanceList list(CallGeneratorParams params) throws ApiException {
        ListOptions o = options(params);
        var r = namespace.isEmpty() ? api.list(o) : api.list(namespace, o);
        if (r.getHttpStatusCode() == 0) {
          throw new ApiException(0, "no HTTP response listing VMIs");
        }
        return r.throwsApiException().getObject();
      }

      @Override
      public Watchable<VirtualMachineInstance> watch(CallGeneratorParams params) throws ApiException {
        ListOptions o = options(params);
        return namespace.isEmpty() ? api.watch(o) : api.watch(namespace, o);
      }

      private ListOptions options(CallGeneratorParams params) {
        ListOptions o = new ListOptions();
        o.setResourceVersion(params.resourceVersion);
        o.setTimeoutSeconds(params.timeoutSeconds);
        if (labelSelector != null && !labelSelector.isBlank()) {
          o.setLabelSelector(labelSelector);
        }
        return o;
      }
    };
  }

  public void addEventHandler(ResourceEventHandler<VirtualMachineInstance> handler, Duration resync) {
    informers.values().forEach(i -> i.addEventHandlerWithResyncPeriod(handler, resync.toMillis()));
  }

  /** The cached VMI, or null. */
  public VirtualMachineInstance get(String namespace, String name) {
    SharedIndexInformer<VirtualMachineInstance> informer = informers.get(namespace);
    if (informer == null) {
      informer = informers.get(ALL);
    }
    if (informer == null) {
      return null;
    }
    return new Lister<>(informer.getIndexer()).namespace(namespace).get(name);
  }

  public boolean hasSynced() {
    return informers.values().stream().allMatch(SharedIndexInformer::hasSynced);
  }

  /** Any one factory: the controller builder wants one, though the watches are wired here. */
  public SharedInformerFactory anyFactory() {
    return factories.values().iterator().next();
  }

  public void start() {
    factories.values().forEach(SharedInformerFactory::startAllRegisteredInformers);
  }

  public void stop() {
    factories.values().forEach(f -> f.stopAllRegisteredInformers(true));
  }
}
