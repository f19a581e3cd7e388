package dev.capk.vmieviction.eviction;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A Cluster annotation that overrides a flag for the Cluster's VMIs (the evacuation limit, the
 * live-migration policy): its value when valid, else the flag's, an invalid value told once per
 * evacuation and value.
 */
final class ClusterOverride<T> {

  /** Tells an invalid value; {@code shown} is the value cut to a length fit for logs and events. */
  interface Notice<T> {
    void invalid(String shown, T used);
  }

  private final Function<String, Optional<T>> parse;

  /** Invalid values already told, per evacuation and value. */
  private final Cache<String, Boolean> told =
      CacheBuilder.newBuilder().maximumSize(100_000).expireAfterWrite(1, TimeUnit.HOURS).build();

  ClusterOverride(Function<String, Optional<T>> parse) {
    this.parse = parse;
  }

  /**
   * @param raw the annotation's value, empty when the Cluster has none
   * @param evacuation the evacuation of one VMI ({@code uid/drain start})
   */
  T resolve(Optional<String> raw, T flag, String evacuation, Notice<T> notice) {
    if (raw.isEmpty()) {
      return flag;
    }
    Optional<T> parsed = parse.apply(raw.get());
    if (parsed.isPresent()) {
      return parsed.get();
    }
    if (told.asMap().putIfAbsent(evacuation + "/" + raw.get(), Boolean.TRUE) == null) {
      notice.invalid(NotEvacuatedNotices.shorten(raw.get()), flag);
    }
    return flag;
  }
}
