package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainProgressListener;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainResult;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.NodeNotFoundException;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.kube.ApiStatus;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code drain NODE [flags]}: drains a node of any cluster with kubectl drain's flags and output,
 * using the drain engine. Exit codes: 0 drained, 1 not drained (refused, timed out, failed, API
 * error), 2 bad usage. Errors are one line each, without stack traces or credentials.
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
  static final int EXIT_USAGE = 2;

  @Parameters(index = "0", paramLabel = "NODE", description = "The node to drain.")
  String node;

  @Option(
      names = "--kubeconfig",
      paramLabel = "FILE",
      description =
          "Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
  Path kubeconfig;

  @Option(
      names = "--context",
      paramLabel = "NAME",
      description = "The kubeconfig context to use (default: its current-context).")
  String context;

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
      names = {"--delete-emptydir-data", "--delete-local-data"},
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
      names = {"-v", "--v"},
      defaultValue = "0",
      paramLabel = "LEVEL",
      description = "Log level: 0 only the report, 1-2 engine log lines, 3+ debug.")
  int verbosity;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  private final PrintStream out;
  private final PrintStream err;
  private final Function<DrainCommand, ApiClient> clients;

  DrainCommand(PrintStream out, PrintStream err, Function<DrainCommand, ApiClient> clients) {
    this.out = out;
    this.err = err;
    this.clients = clients;
  }

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command with the process's streams and environment; returns the exit code. */
  public static int run(String... args) {
    return run(System.out, System.err, args);
  }

  /** Runs the command writing to the given streams; returns the exit code. */
  public static int run(PrintStream out, PrintStream err, String... args) {
    return execute(new DrainCommand(out, err, null), args);
  }

  static int execute(DrainCommand command, String... args) {
    CommandLine cl = new CommandLine(command);
    cl.setOut(new PrintWriter(command.out, true));
    cl.setErr(new PrintWriter(command.err, true));
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          // Never a stack trace: one line, the exception's type when it has no message.
          command.err.println(
              "error: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
          return EXIT_FAILED;
        });
    cl.setParameterExceptionHandler(
        (e, a) -> {
          command.err.println("error: " + e.getMessage());
          command.err.println("See 'drain --help' for usage.");
          return EXIT_USAGE;
        });
    return cl.execute(args);
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
    CliLogging.setVerbosity(verbosity);
    DrainOptions options;
    try {
      options =
          toOptions(new ConsoleReporter(out, err, parseDryRun(dryRun), evictionRetryInterval));
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return EXIT_FAILED;
    }
    ApiClient client;
    try {
      client =
          clients != null
              ? clients.apply(this)
              : KubeconfigClients.load(kubeconfig, context, System.getenv());
    } catch (KubeconfigClients.KubeconfigException e) {
      err.println("error: " + e.getMessage());
      return EXIT_FAILED;
    }
    NodeDrainer drainer = new NodeDrainer(client);
    try {
      DrainResult result = drainer.drain(node, options);
      return report(result, options);
    } catch (NodeNotFoundException e) {
      err.println("Error from server (NotFound): nodes \"" + node + "\" not found");
      return EXIT_FAILED;
    } catch (DrainRefusedException e) {
      err.println(
          "error: unable to drain node \""
              + node
              + "\" due to error: "
              + String.join(
                  ", ",
                  e.refusals().entrySet().stream()
                      .map(r -> r.getKey() + ": " + join(r.getValue()))
                      .toList()));
      if (e.cordonedByThisDrain()) {
        err.println(
            "node/" + node + " stays cordoned; run 'kubectl uncordon " + node + "' to undo");
      }
      return EXIT_FAILED;
    } catch (ApiException e) {
      // The engine's own messages say whether the node was left cordoned; others are the server's.
      String why =
          e.getMessage() != null && e.getMessage().startsWith("drain of node ")
              ? e.getMessage()
              : ApiStatus.describe(e);
      err.println("error: unable to drain node \"" + node + "\": " + why);
      return EXIT_FAILED;
    }
  }

  /**
   * kubectl's --dry-run values. @throws IllegalArgumentException with kubectl's message otherwise
   */
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

  private int report(DrainResult result, DrainOptions options) {
    String suffix = ConsoleReporter.suffix(options.dryRun());
    if (result.isComplete()) {
      out.println("node/" + node + " drained" + suffix);
      return EXIT_OK;
    }
    String why =
        result.timedOut()
            ? "global timeout reached: " + GoDuration.format(options.timeout())
            : result
                .interruption()
                .orElse(
                    result.failed().isEmpty() ? "incomplete" : "some pods could not be evicted");
    err.println("error: unable to drain node \"" + node + "\": " + why);
    if (!result.pending().isEmpty()) {
      err.println("There are pending pods in node \"" + node + "\":");
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
    return EXIT_FAILED;
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
