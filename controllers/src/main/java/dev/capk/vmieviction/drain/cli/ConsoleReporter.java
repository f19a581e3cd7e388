package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.DrainProgressListener;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.drain.SkippedPod;
import dev.capk.vmieviction.time.GoDuration;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/** Prints a drain's progress the way kubectl does, so operators and scripts read familiar lines. */
final class ConsoleReporter implements DrainProgressListener {
  private final PrintStream out;
  private final PrintStream err;
  private final String suffix;
  private final DryRun dryRun;
  private final Duration retryInterval;
  private final boolean reportCordon;

  ConsoleReporter(PrintStream out, PrintStream err, DryRun dryRun, Duration retryInterval) {
    this(out, err, dryRun, retryInterval, true);
  }

  /**
   * @param reportCordon false when the command printed the cordon lines itself, before the drains
   */
  ConsoleReporter(
      PrintStream out,
      PrintStream err,
      DryRun dryRun,
      Duration retryInterval,
      boolean reportCordon) {
    this.out = out;
    this.err = err;
    this.suffix = suffix(dryRun);
    this.dryRun = dryRun;
    this.retryInterval = retryInterval;
    this.reportCordon = reportCordon;
  }

  static String suffix(DryRun dryRun) {
    return switch (dryRun) {
      case NONE -> "";
      case CLIENT -> " (dry run)";
      case SERVER -> " (server dry run)";
    };
  }

  @Override
  public void cordoned(String node, boolean changed) {
    if (reportCordon) {
      out.println(cordonLine(node, true, changed, suffix));
    }
  }

  /**
   * kubectl's line for a (un)cordon: {@code node/x cordoned}, {@code node/x already uncordoned}.
   */
  static String cordonLine(String node, boolean cordon, boolean changed, String suffix) {
    return "node/"
        + node
        + (changed ? " " : " already ")
        + (cordon ? "cordoned" : "uncordoned")
        + suffix;
  }

  @Override
  public void planned(List<PodRef> toEvict, List<SkippedPod> skipped, List<String> warnings) {
    for (String w : warnings) {
      err.println("Warning: " + w);
    }
  }

  @Override
  public void evicting(PodRef pod, boolean usingEviction) {
    // kubectl announces evictions (and, in a client dry run, whatever would go) but not deletions.
    if (usingEviction || dryRun == DryRun.CLIENT) {
      out.println("evicting pod " + pod + suffix);
    }
  }

  @Override
  public void blocked(PodRef pod, Set<String> budgets, String message) {
    String names =
        budgets.isEmpty()
            ? ""
            : " [PodDisruptionBudget "
                + String.join(", ", budgets.stream().sorted().toList())
                + "]";
    err.println(
        "error when evicting pods/\""
            + pod.name()
            + "\" -n \""
            + pod.namespace()
            + "\" (will retry after "
            + GoDuration.format(retryInterval)
            + "): "
            + message
            + names);
  }

  @Override
  public void retrying(PodRef pod, String reason) {
    err.println(
        "error when evicting pods/\""
            + pod.name()
            + "\" -n \""
            + pod.namespace()
            + "\" (will retry): "
            + reason);
  }

  @Override
  public void evicted(PodRef pod) {
    out.println("pod/" + pod.name() + " evicted");
  }

  @Override
  public void deleted(PodRef pod) {
    out.println("pod/" + pod.name() + " deleted");
  }

  @Override
  public void notWaitedFor(PodRef pod, String reason) {
    out.println("pod \"" + pod.name() + "\" " + reason + ", skipping");
  }

  @Override
  public void failed(PodRef pod, String reason) {
    err.println(
        "error when evicting pods/\""
            + pod.name()
            + "\" -n \""
            + pod.namespace()
            + "\": "
            + reason);
  }
}
