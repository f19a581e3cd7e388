package dev.capk.vmieviction.drain;

import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The drain cannot proceed: some pods may not be deleted with the given options (DaemonSet pods
 * without ignoreAllDaemonSets, emptyDir without deleteEmptyDirData, pods without a controller
 * without force...). Nothing was evicted. As with kubectl, the node stays cordoned.
 */
public class DrainRefusedException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient Map<String, List<PodRef>> refusals;

  /** {@code refusals}: read only (a plan's). */
  public DrainRefusedException(String node, Map<String, List<PodRef>> refusals) {
    super("cannot drain node \"" + node + "\": " + String.join("; ", groups(refusals)));
    this.refusals = Collections.unmodifiableMap(refusals);
  }

  /** Reason (kubectl's wording, "cannot delete ...") to the refused pods, in filter order. */
  public Map<String, List<PodRef>> refusals() {
    return refusals;
  }

  public List<PodRef> refusedPods() {
    return refusals.values().stream().flatMap(List::stream).toList();
  }

  /** One {@code cannot delete <reason>: ns/a, ns/b} per reason, in filter order. */
  public List<String> groups() {
    return groups(refusals);
  }

  private static List<String> groups(Map<String, List<PodRef>> refusals) {
    return refusals.entrySet().stream().map(e -> e.getKey() + ": " + join(e.getValue())).toList();
  }

  /** kubectl's rule: a reason reads "cannot delete ...", whatever its filter wrote. */
  static String kubectlReason(String reason) {
    String r = reason == null || reason.isBlank() ? "unexpected error" : reason;
    return r.toLowerCase(Locale.ROOT).startsWith("cannot delete") ? r : "cannot delete " + r;
  }

  static String join(List<PodRef> pods) {
    return pods.stream().map(PodRef::toString).collect(Collectors.joining(", "));
  }
}
