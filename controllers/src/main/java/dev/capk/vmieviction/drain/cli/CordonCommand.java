package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.logging.CliLogging;
import io.kubernetes.client.openapi.ApiClient;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code cordon} and {@code uncordon NODE... | -l SELECTOR}: mark nodes unschedulable or
 * schedulable again, with kubectl's flags, lines ({@code node/x cordoned}, {@code node/x already
 * uncordoned}) and exit codes. One class for both, since they differ only in the value they set.
 */
public final class CordonCommand implements Callable<Integer> {
  @Mixin NodeTargets targets = new NodeTargets();

  @Mixin ConnectionOptions connection = new ConnectionOptions();

  @Option(
      names = "--dry-run",
      defaultValue = "none",
      paramLabel = "none|client|server",
      description =
          "Must be \"none\", \"server\", or \"client\". If client strategy, only print the object"
              + " that would be sent, without sending it. If server strategy, submit server-side"
              + " request without persisting the resource.")
  String dryRun;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  private final boolean cordon;
  private final PrintStream out;
  private final PrintStream err;
  private final Function<ConnectionOptions, ApiClient> clients;

  CordonCommand(
      boolean cordon,
      PrintStream out,
      PrintStream err,
      Function<ConnectionOptions, ApiClient> clients) {
    this.cordon = cordon;
    this.out = out;
    this.err = err;
    this.clients = clients;
  }

  String name() {
    return cordon ? "cordon" : "uncordon";
  }

  @Override
  public Integer call() {
    CliLogging.setVerbosity(connection.verbosity);
    String usage = targets.usageError(name());
    if (usage != null) {
      return NodeCli.usageError(err, name(), usage);
    }
    DryRun strategy;
    try {
      strategy = DrainCommand.parseDryRun(dryRun);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return DrainCommand.EXIT_FAILED;
    }
    ApiClient client;
    try {
      client = clients != null ? clients.apply(connection) : connection.connect(System.getenv());
    } catch (KubeconfigClients.KubeconfigException e) {
      err.println("error: " + e.getMessage());
      return DrainCommand.EXIT_FAILED;
    }
    NodeDrainer drainer = new NodeDrainer(client);
    Optional<List<String>> nodes = NodeCli.resolve(targets, drainer, name(), err);
    if (nodes.isEmpty()) {
      return DrainCommand.EXIT_FAILED;
    }
    // kubectl prints each node's refusal ("error: unable to cordon node ...") and still exits 0
    // (RunCordonOrUncordon returns no error for them): a drop-in does the same.
    NodeCli.setUnschedulable(drainer, nodes.get(), cordon, strategy, out, err);
    return DrainCommand.EXIT_OK;
  }
}
