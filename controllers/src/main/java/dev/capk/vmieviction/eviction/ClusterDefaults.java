package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.KubeVirt;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.KubeVirtList;
import dev.capk.vmieviction.eviction.MigrationDecision.MigrationLimits;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster-wide eviction strategy and migration limits from the KubeVirt CR, read at most once
 * per refresh interval. Only an answer counts: no CRD (404), no CR, or a CR without the field says
 * "not set", and the operator's fallback strategy and KubeVirt's default limits apply. A failed
 * list (429, 5xx, 403, timeout, reset) says nothing: the last answer stays in use when there was
 * one (read again after the refresh interval), else the read is {@link Readout.Unreadable} and is
 * tried again with backoff (from 1 s, doubling up to the refresh interval).
 */
public final class ClusterDefaults {

  private static final Logger log = LoggerFactory.getLogger(ClusterDefaults.class);

  static final Duration FIRST_RETRY = Duration.ofSeconds(1);

  private final Supplier<KubernetesApiResponse<KubeVirtList>> list;
  private final Duration refresh;
  private final Clock clock;

  /** The last answer (null: never one) and failure (null: the last read answered). */
  private Optional<KubeVirt.Configuration> answer;

  private String problem;
  private Instant nextRead = Instant.MIN;
  private Duration retry = FIRST_RETRY;

  /** Reads the KubeVirt CRs of the infra cluster {@code infra} reaches. */
  public ClusterDefaults(ApiClient infra, Duration refresh, Clock clock) {
    this(
        new GenericKubernetesApi<>(
                KubeVirt.class,
                KubeVirtList.class,
                KubeVirtApi.GROUP,
                KubeVirtApi.VERSION,
                KubeVirtApi.KUBEVIRT_PLURAL,
                infra)
            ::list,
        refresh,
        clock);
  }

  /**
   * @param list one list of the KubeVirt CRs (GenericKubernetesApi's: an I/O failure is thrown)
   */
  ClusterDefaults(
      Supplier<KubernetesApiResponse<KubeVirtList>> list, Duration refresh, Clock clock) {
    this.list = list;
    this.refresh = refresh;
    this.clock = clock;
  }

  /** {@code spec.configuration.evictionStrategy} of the KubeVirt CR: empty when it sets none. */
  public Readout<Optional<String>> evictionStrategy() {
    return configuration()
        .map(c -> c.map(KubeVirt.Configuration::getEvictionStrategy).filter(s -> !s.isBlank()));
  }

  /** KubeVirt's migration limits from the KubeVirt CR, or KubeVirt's defaults where unset. */
  public Readout<MigrationLimits> migrationLimits() {
    return configuration()
        .map(c -> MigrationLimits.of(c.map(KubeVirt.Configuration::getMigrations).orElse(null)));
  }

  /** An answer replaces what was known, a failure keeps it. */
  private synchronized Readout<Optional<KubeVirt.Configuration>> configuration() {
    Instant now = clock.instant();
    if (!now.isBefore(nextRead)) {
      Readout<Optional<KubeVirt.Configuration>> read = read();
      if (read instanceof Readout.Answer<Optional<KubeVirt.Configuration>> a) {
        if (problem != null) {
          log.info("KubeVirt CR read again after failures");
        }
        answer = a.value();
        problem = null;
      } else {
        String what = ((Readout.Unreadable<Optional<KubeVirt.Configuration>>) read).what();
        if (!what.equals(problem)) {
          log.warn(
              answer != null
                  ? "KubeVirt CR unreadable, its last answer stays in use detail=\"{}\""
                  : "KubeVirt CR unreadable, VMIs without their own eviction strategy wait"
                      + " detail=\"{}\"",
              what);
        }
        problem = what;
      }
      nextRead = now.plus(answer != null ? refresh : retry);
      Duration doubled = retry.multipliedBy(2);
      retry = answer != null ? FIRST_RETRY : doubled.compareTo(refresh) > 0 ? refresh : doubled;
    }
    return answer != null ? new Readout.Answer<>(answer) : new Readout.Unreadable<>(problem);
  }

  private Readout<Optional<KubeVirt.Configuration>> read() {
    try {
      return answerOf(list.get());
    } catch (RuntimeException e) {
      // GenericKubernetesApi's way of saying "I/O failure": timeout, reset, refused.
      return new Readout.Unreadable<>(
          "listing KubeVirt CRs failed: no response (" + e.getClass().getSimpleName() + ")");
    }
  }

  /**
   * What one list of KubeVirt CRs says: the first CR not being deleted that has a configuration, or
   * "not set" (no CRD, no such CR); any other failure is unreadable. Pure.
   */
  static Readout<Optional<KubeVirt.Configuration>> answerOf(KubernetesApiResponse<KubeVirtList> r) {
    int code = r.getHttpStatusCode();
    if (code == 404) {
      return new Readout.Answer<>(Optional.empty()); // no KubeVirt CRD: nothing sets a strategy
    }
    if (!r.isSuccess()) {
      return new Readout.Unreadable<>("listing KubeVirt CRs failed: HTTP " + code + reason(r));
    }
    if (r.getObject() == null || r.getObject().getItems() == null) {
      // GenericKubernetesApi reports an answer without a body as a success without an object.
      return new Readout.Unreadable<>("listing KubeVirt CRs failed: an answer without a list");
    }
    return new Readout.Answer<>(
        r.getObject().getItems().stream()
            .filter(
                kv -> kv.getMetadata() == null || kv.getMetadata().getDeletionTimestamp() == null)
            .map(KubeVirt::getSpec)
            .filter(s -> s != null && s.getConfiguration() != null)
            .map(KubeVirt.Spec::getConfiguration)
            .findFirst());
  }

  /** The server's own words, shortened: the infra API server's Status, never a credential. */
  private static String reason(KubernetesApiResponse<?> r) {
    String m =
        r.getStatus() == null ? "" : Objects.toString(r.getStatus().getMessage(), "").strip();
    return m.isEmpty() ? "" : " (" + (m.length() > 200 ? m.substring(0, 200) + "..." : m) + ")";
  }

  /**
   * What a read of a setting came to: the server's answer (which may itself say "not set"), or no
   * answer at all, never taken for "not set" (that would apply a default the server may not hold).
   */
  public sealed interface Readout<T> {

    /** The server answered: {@code value} is what it holds (e.g. an empty Optional: not set). */
    record Answer<T>(T value) implements Readout<T> {}

    /** The read failed: {@code what} says which read and how, for events and logs (no secrets). */
    record Unreadable<T>(String what) implements Readout<T> {}

    /** The answer's value mapped; a failed read stays one, with the same description. */
    default <R> Readout<R> map(Function<? super T, ? extends R> f) {
      return this instanceof Answer<T> a
          ? new Answer<>(f.apply(a.value()))
          : new Unreadable<>(((Unreadable<T>) this).what());
    }
  }
}
