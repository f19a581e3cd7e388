package dev.capk.vmieviction.eviction;

import java.util.Optional;

/**
 * How many worker VMIs of one tenant Cluster may be evacuated at once: a count ({@code 0} =
 * unlimited) or a percentage of the Cluster's VMIs ({@code 25%}, never less than one VMI). Written
 * as the flag {@code --max-concurrent-evacuations-per-cluster} or the Cluster annotation {@code
 * capk.cluster.x-k8s.io/max-concurrent-evacuations}. Pure.
 *
 * @param value the count, or the percentage when {@code percent}
 */
public record EvacuationLimit(int value, boolean percent) {

  public static final EvacuationLimit UNLIMITED = new EvacuationLimit(0, false);

  public EvacuationLimit {
    if (value < 0 || (percent && (value < 1 || value > 100))) {
      throw new IllegalArgumentException("not a limit: " + value + (percent ? "%" : ""));
    }
  }

  /** {@code "3"}, {@code "0"} or {@code "25%"}; empty for anything else. */
  public static Optional<EvacuationLimit> parse(String raw) {
    if (raw == null) {
      return Optional.empty();
    }
    String s = raw.trim();
    boolean percent = s.endsWith("%");
    String digits = percent ? s.substring(0, s.length() - 1) : s;
    if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit)) {
      return Optional.empty();
    }
    int value = Integer.parseInt(digits);
    if (percent && (value < 1 || value > 100)) {
      return Optional.empty();
    }
    return Optional.of(new EvacuationLimit(value, percent));
  }

  public boolean unlimited() {
    return !percent && value == 0;
  }

  /**
   * The number of VMIs this limit allows for a Cluster of {@code clusterVmis} VMIs: a percentage
   * rounds down, and is at least one. {@link Integer#MAX_VALUE} when unlimited.
   */
  public int resolve(int clusterVmis) {
    if (unlimited()) {
      return Integer.MAX_VALUE;
    }
    if (!percent) {
      return value;
    }
    return Math.max(1, (int) ((long) clusterVmis * value / 100));
  }

  @Override
  public String toString() {
    return value + (percent ? "%" : "");
  }
}
