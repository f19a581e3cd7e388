package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.PodFilters;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code drain NODE... | -l SELECTOR [flags]}: kubectl drain's flags, lines and exit codes (0 every
 * node drained, 1 anything else) on the drain engine. As kubectl, it cordons every node, then
 * drains them; unlike kubectl, concurrently (the API server still checks each eviction against the
 * budgets).
 */
@Command(
    name = "drain",
    addMethodSubcommands = false,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
      "Drain node in preparation for maintenance: cordon it, then evict its pods (kubectl drain semantics).",
      "Evictions run concurrently and pod deletion is followed with one watch."
    })
public final class DrainCommand extends NodeCommand {
  /** Nodes drained at once; each drain bounds its own evictions in flight. */
  static final int MAX_PARALLEL_NODES = 16;

  /** Evictions and their watch share one HTTP/2 connection. */
  @Override
  boolean concurrent() {
    return true;
  }

  @Option(
      names = "--force",
      arity = "0..1",
      fallbackValue = "true",
      description = "Continue even if there are pods that do not declare a controller.")
  boolean force;

  @Option(
      names = "--ignore-daemonsets",
      arity = "0..1",
      fallbackValue = "true",
      description = "Ignore DaemonSet-managed pods.")
  boolean ignoreDaemonSets;

  @Option(
      names = {"--delete-emptydir-data"},
      arity = "0..1",
      fallbackValue = "true",
      description =
          "Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
  boolean deleteEmptyDirData;

  @Option(
      names = "--grace-period",
      defaultValue = "-1",
      paramLabel = "SECONDS",
      description =
          "Period of time in seconds given to each pod to terminate gracefully. If negative, the default value specified in the pod will be used.")
  int gracePeriod;

  @Option(
      names = "--timeout",
      defaultValue = "0s",
      paramLabel = "DURATION",
      converter = ConnectionOptions.DurationConverter.class,
      description =
          "The length of time to wait before giving up, zero means infinite (e.g. 90s, 5m).")
  Duration timeout;

  @Option(
      names = "--pod-selector",
      defaultValue = "",
      paramLabel = "SELECTOR",
      description = "Label selector to filter pods on the node.")
  String podSelector;

  @Option(
      names = "--disable-eviction",
      arity = "0..1",
      fallbackValue = "true",
      description =
          "Force drain to use delete, even if eviction is supported. This will bypass checking PodDisruptionBudgets, use with caution.")
  boolean disableEviction;

  @Option(
      names = "--skip-wait-for-delete-timeout",
      defaultValue = "0",
      paramLabel = "SECONDS",
      description =
          "If pod DeletionTimestamp older than N seconds, skip waiting for the pod. Seconds must be greater than 0 to skip.")
  int skipWaitForDeleteTimeoutSeconds;

  @Option(
      names = "--chunk-size",
      defaultValue = "500",
      paramLabel = "N",
      description = "Return large lists in chunks rather than all at once. Pass 0 to disable.")
  int chunkSize;

  @Option(
      names = "--max-concurrent-evictions",
      defaultValue = "" + DrainOptions.DEFAULT_MAX_CONCURRENT_EVICTIONS,
      paramLabel = "N",
      description = "Evictions in flight at once (not a kubectl flag).")
  int maxConcurrentEvictions;

  @Option(
      names = "--eviction-retry-interval",
      defaultValue = "5s",
      paramLabel = "DURATION",
      converter = ConnectionOptions.DurationConverter.class,
      description =
          "Pause before retrying an eviction a PodDisruptionBudget refused (not a kubectl flag; kubectl waits 5s).")
  Duration evictionRetryInterval;

  private final boolean terminal;
  DrainOptions options;

  DrainCommand(PrintStream out, PrintStream err, boolean terminal) {
    super("drain", out, err);
    this.terminal = terminal;
  }

  /** The engine options these flags mean, checked before anything is sent. */
  @Override
  void check(DryRun strategy) {
    try {
      // kubectl: a negative grace period means the pod's own; a skip-wait of 0 or less, none.
      options =
          new DrainOptions(
              force,
              ignoreDaemonSets,
              deleteEmptyDirData,
              Math.max(-1, gracePeriod),
              timeout,
              podSelector,
              disableEviction,
              Duration.ofSeconds(Math.max(0, skipWaitForDeleteTimeoutSeconds)),
              Math.max(0, chunkSize),
              strategy,
              maxConcurrentEvictions,
              evictionRetryInterval);
    } catch (IllegalArgumentException e) {
      if (e.getMessage() != null && e.getMessage().startsWith("invalid label selector")) {
        throw new IllegalArgumentException(
            "--pod-selector=" + podSelector + " must be a valid label selector: " + e.getMessage(),
            e);
      }
      throw e;
    }
  }

  @Override
  int run(ApiClient client, List<String> nodes, DryRun strategy) {
    // As kubectl: cordon every node first, so no pod moves from one of them onto another.
    if (!setUnschedulable(nodes, true, strategy)) {
      return 1;
    }
    NodeDrainer drainer = new NodeDrainer(client);
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.min(MAX_PARALLEL_NODES, Math.max(1, nodes.size())),
            Thread.ofPlatform().name("drain-node-", 0).daemon().factory());
    try (ConsoleReporter reporter = new ConsoleReporter(out, err, terminal, nodes.size())) {
      List<CompletableFuture<String>> drains =
          nodes.stream()
              .map(n -> CompletableFuture.supplyAsync(() -> drainOne(drainer, n, reporter), pool))
              .toList();
      List<Integer> pending =
          IntStream.range(0, nodes.size())
              .filter(i -> drains.get(i).join() != null)
              .boxed()
              .toList();
      if (pending.isEmpty()) {
        return 0;
      }
      reporter.err("There are pending nodes to be drained:");
      pending.forEach(i -> reporter.err(" " + nodes.get(i)));
      // kubectl's aggregate error, printed as is (no "error: ").
      reporter.err(aggregate(pending.stream().map(i -> drains.get(i).join()).toList()));
      return 1;
    } finally {
      pool.shutdownNow();
    }
  }

  /** Drains one node; returns null when drained, else kubectl's error text for it. */
  private String drainOne(NodeDrainer drainer, String node, ConsoleReporter reporter) {
    String error;
    try {
      error = drainer.drain(node, options, reporter).error().orElse(null);
    } catch (DrainRefusedException e) {
      error = aggregate(e.groups().stream().map(DrainCommand::kubectlRefusal).toList());
    } catch (ApiException e) {
      error = RawApi.describe(e);
    } catch (RuntimeException e) {
      error = NodeCli.message(e);
    }
    if (error != null) {
      reporter.err(
          "error: unable to drain node \"%s\" due to error: %s, continuing command..."
              .formatted(node, error));
    }
    return error;
  }

  /** kubectl's aggregate error: one message as is, several in brackets. */
  private static String aggregate(List<String> errors) {
    return errors.size() == 1 ? errors.get(0) : "[" + String.join(", ", errors) + "]";
  }

  /**
   * kubectl (v1.35) writes "cannot delete " before every filter's message, and its message for pods
   * without a controller already starts with it: scripts see "cannot delete cannot delete Pods that
   * declare no controller", so we print the same.
   */
  static String kubectlRefusal(String group) {
    return group.startsWith(PodFilters.UNMANAGED_FATAL + ": ") ? "cannot delete " + group : group;
  }
}
