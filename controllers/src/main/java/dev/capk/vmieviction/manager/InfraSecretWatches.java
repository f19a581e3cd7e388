package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.infra.InfraBindings.SecretRef;
import dev.capk.vmieviction.infra.InfraBindings.Unreadable;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.kube.WatchListApi;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches exactly the infra Secrets that KubevirtClusters name, each by name in its namespace,
 * never every Secret, and tells {@code changed} of each change; the caller reads them from here.
 */
final class InfraSecretWatches implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(InfraSecretWatches.class);

  private final ApiClient watchClient;
  private final CoreV1Api requests;
  private final WatchListApi<V1Secret, V1SecretList> api;
  private final Runnable changed;
  private final Map<SecretRef, ManagementInformers.Kind<V1Secret>> watches =
      new ConcurrentHashMap<>();

  /** Kept while a read fails. */
  private final Map<SecretRef, Map<String, byte[]>> lastRead = new ConcurrentHashMap<>();

  InfraSecretWatches(ApiClient watchClient, ApiClient requestClient, Runnable changed) {
    this.watchClient = watchClient;
    this.requests = new CoreV1Api(requestClient);
    this.api = ManagementInformers.secrets(watchClient);
    this.changed = changed;
  }

  synchronized void retain(Set<SecretRef> wanted) {
    for (SecretRef ref : Set.copyOf(watches.keySet())) {
      if (!wanted.contains(ref)) {
        lastRead.remove(ref);
        watches.remove(ref).factories().forEach(f -> f.stopAllRegisteredInformers(true));
        log.info("infra secret watch stopped secret={}", ref);
      }
    }
    wanted.forEach(ref -> watches.computeIfAbsent(ref, this::start));
  }

  private ManagementInformers.Kind<V1Secret> start(SecretRef ref) {
    var secret =
        ManagementInformers.Kind.<V1Secret>of(
            V1Secret.class,
            "Secret/" + ref.name(),
            new ListOptions().fieldSelector("metadata.name=" + ref.name()),
            UnaryOperator.identity());
    secret.addEach(watchClient, List.of(ref.namespace()), api);
    secret.onChange(s -> changed.run());
    secret.factories().forEach(SharedInformerFactory::startAllRegisteredInformers);
    log.info("infra secret watch started secret={}", ref);
    return secret;
  }

  /**
   * The Secret's data, empty when it does not exist: from its watch once that has listed, else one
   * GET. A failed read is not an answer: what was read before still holds.
   *
   * @throws Unreadable when it could not be read and never was
   */
  Optional<Map<String, byte[]>> data(SecretRef ref) {
    Optional<Map<String, byte[]>> read;
    var w = watches.get(ref);
    if (w != null && w.hasSynced()) {
      read = w.find(ref.namespace(), ref.name()).map(InfraSecretWatches::dataOf);
    } else {
      try {
        read =
            Optional.of(
                dataOf(requests.readNamespacedSecret(ref.name(), ref.namespace()).execute()));
      } catch (ApiException e) {
        if (e.getCode() != 404) {
          String why =
              e.getCode() == 403
                  ? "not allowed (HTTP 403: the controller's RBAC)"
                  : RawApi.describeWithoutServerText(e);
          Map<String, byte[]> last = lastRead.get(ref);
          if (last == null) {
            throw new Unreadable(why);
          }
          log.info("infra secret unreadable, last read kept secret={} error={}", ref, why);
          return Optional.of(last);
        }
        read = Optional.empty();
      }
    }
    read.ifPresentOrElse(d -> lastRead.put(ref, d), () -> lastRead.remove(ref));
    return read;
  }

  private static Map<String, byte[]> dataOf(V1Secret s) {
    return s.getData() == null ? Map.of() : new HashMap<>(s.getData());
  }

  @Override
  public void close() {
    retain(Set.of());
  }
}
