package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.eviction.MigrationDecision.MigrationLimits;
import java.util.Optional;
import java.util.function.Function;

/**
 * KubeVirt's cluster-wide defaults, as the KubeVirt CR holds them. A failed read is {@link
 * Readout.Unreadable}, never "not set": the caller waits rather than apply a default.
 */
public interface ClusterDefaults {

  /** {@code spec.configuration.evictionStrategy} of the KubeVirt CR: empty when it sets none. */
  Readout<Optional<String>> evictionStrategy();

  /** KubeVirt's migration limits from the KubeVirt CR, or KubeVirt's defaults where unset. */
  default Readout<MigrationLimits> migrationLimits() {
    return Readout.answer(MigrationLimits.KUBEVIRT_DEFAULTS);
  }

  /**
   * What a read of a setting came to: the server's answer (which may itself say "not set"), or no
   * answer at all. A failed read (429, 5xx, timeout, reset, 403) is never an answer: taking it for
   * "not set" would apply a default the server may not hold.
   */
  public sealed interface Readout<T> {

    /** The server answered: {@code value} is what it holds (e.g. an empty Optional: not set). */
    record Answer<T>(T value) implements Readout<T> {}

    /** The read failed: {@code what} says which read and how, for events and logs (no secrets). */
    record Unreadable<T>(String what) implements Readout<T> {}

    static <T> Readout<T> answer(T value) {
      return new Answer<>(value);
    }

    static <T> Readout<T> unreadable(String what) {
      return new Unreadable<>(what);
    }

    /** The answer's value mapped; a failed read stays one, with the same description. */
    default <R> Readout<R> map(Function<? super T, ? extends R> f) {
      if (this instanceof Answer<T> a) {
        return new Answer<>(f.apply(a.value()));
      }
      return new Unreadable<>(((Unreadable<T>) this).what());
    }
  }
}
