package dev.capk.vmieviction.drain.cli;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainProgressListener;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainResult;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.NodeNotFoundException;
import dev.capk.vmieviction.drain.PodFilters;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.logging.CliLogging;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code drain NODE... | -l SELECTOR [flags]}: drains nodes of any cluster with kubectl drain's
 * flags, output lines and exit codes, using the drain engine. As kubectl, it resolves every node
 * first, cordons them all, then drains them; unlike kubectl, the nodes are drained concurrently
 * (budgets still hold: the API server checks each eviction against them). Exit codes: 0 every node
 * drained, 1 anything else (bad usage, refused, timed out, failed, API error). Errors are one line
 * each, without stack traces or credentials.
 */
@Command(
    name = "drain",
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
      "Drain node in preparation for maintenance: cordon it, then evict its pods (kubectl drain semantics).",
      "Evictions run concurrently and pod deletion is followed with one watch."
    })
public final class DrainCommand implements Callable<Integer> {
  static final int EXIT_OK = 0;
  static final int EXIT_FAILED = 1;

  /** Nodes drained at once; each drain bounds its own evictions in flight. */
  static final int MAX_PARALLEL_NODES = 16;

  @Mixin NodeTargets targets = new NodeTargets();

  @Mixin ConnectionOptions connection = new ConnectionOptions();

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
      converter = DurationConverter.class,
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
      names = "--dry-run",
      defaultValue = "none",
      paramLabel = "none|client|server",
      description =
          "Must be \"none\", \"server\", or \"client\". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.")
  String dryRun;

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
      converter = DurationConverter.class,
      description =
          "Pause before retrying an eviction a PodDisruptionBudget refused (not a kubectl flag; kubectl waits 5s).")
  Duration evictionRetryInterval;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  private final PrintStream out;
  private final PrintStream err;
  private final Function<ConnectionOptions, ApiClient> clients;
  private final boolean terminal;

  DrainCommand(PrintStream out, PrintStream err, Function<ConnectionOptions, ApiClient> clients) {
    this(out, err, clients, false);
  }

  DrainCommand(
      PrintStream out,
      PrintStream err,
      Function<ConnectionOptions, ApiClient> clients,
      boolean terminal) {
    this.out = out;
    this.err = err;
    this.clients = clients;
    this.terminal = terminal;
  }

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs {@code drain ARGS} with the process's streams and environment; returns the exit code. */
  public static int run(String... args) {
    return NodeCli.run(args.length == 0 ? new String[] {"drain"} : prepend("drain", args));
  }

  /** Runs {@code drain ARGS} writing to the given streams; returns the exit code. */
  public static int run(PrintStream out, PrintStream err, String... args) {
    return NodeCli.run(out, err, false, prepend("drain", args));
  }

  private static String[] prepend(String first, String[] rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  /**
   * The engine options these flags mean. @throws IllegalArgumentException with kubectl's wording
   * for bad values
   */
  DrainOptions toOptions(DrainProgressListener listener) {
    DryRun strategy = parseDryRun(dryRun);
    try {
      return DrainOptions.builder()
          .force(force)
          .ignoreAllDaemonSets(ignoreDaemonSets)
          .deleteEmptyDirData(deleteEmptyDirData)
          // kubectl: any negative value means the pod's own grace period.
          .gracePeriodSeconds(Math.max(-1, gracePeriod))
          .timeout(timeout)
          .podSelector(podSelector)
          .disableEviction(disableEviction)
          // kubectl: 0 or negative means wait for every pod.
          .skipWaitForDeleteTimeout(
              Duration.ofSeconds(Math.max(0, skipWaitForDeleteTimeoutSeconds)))
          .chunkSize(Math.max(0, chunkSize))
          .dryRun(strategy)
          .maxConcurrentEvictions(maxConcurrentEvictions)
          .evictionRetryInterval(evictionRetryInterval)
          .progressListener(listener)
          .build();
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
  public Integer call() {
    CliLogging.setVerbosity(connection.verbosity);
    String usage = targets.usageError("drain");
    if (usage != null) {
      return NodeCli.usageError(err, "drain", usage);
    }
    DrainOptions options;
    try {
      options = toOptions(DrainProgressListener.NONE);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return EXIT_FAILED;
    }
    ApiClient client;
    try {
      client = clients != null ? clients.apply(connection) : connection.connect(System.getenv());
    } catch (KubeconfigClients.KubeconfigException e) {
      err.println("error: " + e.getMessage());
      return EXIT_FAILED;
    }
    NodeDrainer drainer = new NodeDrainer(client);
    Optional<List<String>> nodes = NodeCli.resolve(targets, drainer, "drain", err);
    if (nodes.isEmpty()) {
      return EXIT_FAILED;
    }
    // As kubectl: cordon every node first, so no pod moves from one of them onto another.
    if (!NodeCli.setUnschedulable(drainer, nodes.get(), true, options.dryRun(), out, err)) {
      return EXIT_FAILED;
    }
    try (ProgressLine progress = ProgressLine.start(terminal, out, nodes.get().size())) {
      return drainAll(drainer, nodes.get(), options, progress);
    }
  }

  /** Drains the (already cordoned) nodes concurrently and reports as kubectl does. */
  private int drainAll(
      NodeDrainer drainer, List<String> nodes, DrainOptions options, ProgressLine progress) {
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.min(MAX_PARALLEL_NODES, Math.max(1, nodes.size())),
            new ThreadFactoryBuilder().setNameFormat("drain-node-%d").setDaemon(true).build());
    Map<String, Future<String>> errors = new LinkedHashMap<>();
    try {
      for (String node : nodes) {
        errors.put(node, pool.submit(() -> drainOne(drainer, node, options, progress)));
      }
      List<String> pendingNodes = new ArrayList<>();
      List<String> fatal = new ArrayList<>();
      for (Map.Entry<String, Future<String>> e : errors.entrySet()) {
        String error;
        try {
          error = e.getValue().get();
        } catch (ExecutionException failed) {
          error = String.valueOf(failed.getCause());
        }
        if (error != null) {
          pendingNodes.add(e.getKey());
          fatal.add(error);
        }
      }
      if (fatal.isEmpty()) {
        return EXIT_OK;
      }
      progress.clear();
      err.println("There are pending nodes to be drained:");
      pendingNodes.forEach(n -> err.println(" " + n));
      // kubectl's aggregate error, printed as is (no "error: "): one message, several in brackets.
      err.println(fatal.size() == 1 ? fatal.get(0) : "[" + String.join(", ", fatal) + "]");
      return EXIT_FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("error: interrupted");
      return EXIT_FAILED;
    } finally {
      pool.shutdownNow();
    }
  }

  /** Drains one node; returns null when drained, else kubectl's error text for it. */
  private String drainOne(
      NodeDrainer drainer, String node, DrainOptions base, ProgressLine progress) {
    DrainOptions options =
        base.toBuilder()
            .progressListener(
                progress.tracking(
                    new ConsoleReporter(
                        progress.out(out),
                        progress.out(err),
                        base.dryRun(),
                        base.evictionRetryInterval(),
                        false)))
            .build();
    String error;
    try {
      DrainResult result = drainer.drain(node, options);
      error = report(node, result, options, progress);
    } catch (NodeNotFoundException e) {
      error = "nodes \"" + node + "\" not found";
    } catch (DrainRefusedException e) {
      List<String> groups =
          e.refusals().entrySet().stream()
              .map(r -> kubectlRefusal(r.getKey()) + ": " + join(r.getValue()))
              .toList();
      error = groups.size() == 1 ? groups.get(0) : "[" + String.join(", ", groups) + "]";
    } catch (ApiException e) {
      // The engine's own messages say whether the node was left cordoned; others are the server's.
      error =
          e.getMessage() != null && e.getMessage().startsWith("drain of node ")
              ? e.getMessage()
              : ApiStatus.describe(e);
    } catch (RuntimeException e) {
      error = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
    if (error != null) {
      progress
          .out(err)
          .println(
              "error: unable to drain node \""
                  + node
                  + "\" due to error: "
                  + error
                  + ", continuing command...");
    }
    return error;
  }

  /** kubectl's dry-run values. @throws IllegalArgumentException with kubectl's message otherwise */
  static DryRun parseDryRun(String value) {
    return switch (value == null ? "none" : value) {
      case "none", "" -> DryRun.NONE;
      case "client" -> DryRun.CLIENT;
      case "server" -> DryRun.SERVER;
      default ->
          throw new IllegalArgumentException(
              "Invalid dry-run value ("
                  + value
                  + "). Must be \"none\", \"server\", or \"client\".");
    };
  }

  /** Prints the node's outcome; returns null when drained, else the error's text. */
  private String report(
      String node, DrainResult result, DrainOptions options, ProgressLine progress) {
    String suffix = ConsoleReporter.suffix(options.dryRun());
    PrintStream out = progress.out(this.out);
    PrintStream err = progress.out(this.err);
    if (result.isComplete()) {
      out.println("node/" + node + " drained" + suffix);
      return null;
    }
    PodRef blocked =
        result.pending().stream()
            .filter(result.blockingBudgets()::containsKey)
            .findFirst()
            .orElse(null);
    String timeout = "global timeout reached: " + GoDuration.format(options.timeout());
    String why =
        result.timedOut()
            // kubectl names the (first) pod whose eviction a budget kept refusing.
            ? blocked == null
                ? timeout
                : "error when evicting pods/\""
                    + blocked.name()
                    + "\" -n \""
                    + blocked.namespace()
                    + "\": "
                    + timeout
            : result
                .interruption()
                .orElse(
                    result.failed().isEmpty() ? "incomplete" : "some pods could not be evicted");
    if (!result.pending().isEmpty()) {
      err.println("There are pending pods in node \"" + node + "\" when an error occurred: " + why);
      for (PodRef p : result.pending()) {
        Set<String> budgets = result.blockingBudgets().get(p);
        String detail =
            budgets != null
                ? " (blocked by PodDisruptionBudget "
                    + (budgets.isEmpty()
                        ? "?"
                        : String.join(", ", budgets.stream().sorted().toList()))
                    + ")"
                : result.pendingTerminating().contains(p) ? " (terminating)" : "";
        err.println("pod/" + p.name() + " -n " + p.namespace() + detail);
      }
    }
    for (Map.Entry<PodRef, String> f : result.failed().entrySet()) {
      err.println(
          "failed: pod/"
              + f.getKey().name()
              + " -n "
              + f.getKey().namespace()
              + ": "
              + f.getValue());
    }
    return why;
  }

  /**
   * kubectl (v1.35) writes "cannot delete " before every filter's message, and its message for pods
   * without a controller already starts with it: scripts see "cannot delete cannot delete Pods that
   * declare no controller", so we print the same.
   */
  static String kubectlRefusal(String reason) {
    return reason.equals(PodFilters.UNMANAGED_FATAL) ? "cannot delete " + reason : reason;
  }

  private static String join(List<PodRef> pods) {
    return String.join(", ", pods.stream().map(PodRef::toString).toList());
  }

  /** picocli converter for Go-style durations. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return GoDuration.parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}
