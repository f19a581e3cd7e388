package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.KubeVirt;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster-wide eviction strategy and migration limits from the KubeVirt CR, read at most once
 * per refresh interval. Unreadable (no CRD, no CR, RBAC) means "not known": the operator's fallback
 * strategy and KubeVirt's default limits apply.
 */
public final class KubeVirtClusterDefaults implements ClusterDefaults {

  private static final Logger log = LoggerFactory.getLogger(KubeVirtClusterDefaults.class);

  private final GenericKubernetesApi<KubeVirt, KubeVirtList> api;
  private final Duration refresh;
  private final Clock clock;
  private volatile Instant readAt = Instant.MIN;
  private volatile Optional<KubeVirt.Configuration> cached = Optional.empty();
  private volatile String lastProblem;

  public KubeVirtClusterDefaults(
      GenericKubernetesApi<KubeVirt, KubeVirtList> api, Duration refresh, Clock clock) {
    this.api = api;
    this.refresh = refresh;
    this.clock = clock;
  }

  @Override
  public Optional<String> evictionStrategy() {
    return configuration()
        .map(KubeVirt.Configuration::getEvictionStrategy)
        .filter(s -> !s.isBlank());
  }

  @Override
  public MigrationLimits migrationLimits() {
    return configuration()
        .map(KubeVirt.Configuration::getMigrations)
        .map(
            m ->
                MigrationLimits.of(
                    m.getParallelMigrationsPerCluster(), m.getParallelOutboundMigrationsPerNode()))
        .orElse(MigrationLimits.KUBEVIRT_DEFAULTS);
  }

  private Optional<KubeVirt.Configuration> configuration() {
    Instant now = clock.instant();
    if (readAt != Instant.MIN && Duration.between(readAt, now).compareTo(refresh) < 0) {
      return cached;
    }
    synchronized (this) {
      if (readAt != Instant.MIN
          && Duration.between(readAt, clock.instant()).compareTo(refresh) < 0) {
        return cached;
      }
      cached = read();
      readAt = clock.instant();
      return cached;
    }
  }

  private Optional<KubeVirt.Configuration> read() {
    KubernetesApiResponse<KubeVirtList> r;
    try {
      r = api.list();
    } catch (RuntimeException e) {
      report("listing KubeVirt CRs failed: " + e.getClass().getSimpleName());
      return cached;
    }
    if (!r.isSuccess()) {
      report("listing KubeVirt CRs failed: HTTP " + r.getHttpStatusCode());
      // 404: no KubeVirt CRD; 403: not allowed. Keep what we knew, if anything.
      return r.getHttpStatusCode() == 404 ? Optional.empty() : cached;
    }
    if (r.getObject() == null || r.getObject().getItems() == null) {
      // GenericKubernetesApi reports a failed connection as a success without an object.
      report("listing KubeVirt CRs failed: no response from the API server");
      return cached;
    }
    return r.getObject().getItems().stream()
        .filter(kv -> kv.getMetadata() == null || kv.getMetadata().getDeletionTimestamp() == null)
        .map(KubeVirt::getSpec)
        .filter(s -> s != null && s.getConfiguration() != null)
        .map(KubeVirt.Spec::getConfiguration)
        .findFirst();
  }

  private void report(String problem) {
    if (!problem.equals(lastProblem)) {
      log.info(
          "cluster default eviction strategy unknown, using the fallback detail=\"{}\"", problem);
      lastProblem = problem;
    }
  }
}
