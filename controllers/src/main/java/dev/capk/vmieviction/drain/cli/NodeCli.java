package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.drain.NodeDrainer;
import dev.capk.vmieviction.drain.NodeNotFoundException;
import dev.capk.vmieviction.kube.ApiStatus;
import io.kubernetes.client.openapi.ApiException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The node commands a drop-in for kubectl needs, {@code drain}, {@code cordon} and {@code
 * uncordon}, behind one entry point (the jar's, and the {@code kubectl-fastdrain} plugin's). Holds
 * what they share: kubectl's wording for usage errors and unknown flags (always exit 1), resolving
 * the nodes, and the cordon pass.
 */
@Command(
    name = NodeCli.NAME,
    description = "Drain, cordon and uncordon nodes: kubectl's flags and output, a faster drain.")
public final class NodeCli {
  /** How the command is invoked as a kubectl plugin; used in "see --help" hints. */
  static final String NAME = "kubectl fastdrain";

  private static final List<String> COMMANDS = List.of("drain", "cordon", "uncordon");

  private NodeCli() {}

  /** Runs {@code drain|cordon|uncordon ARGS} on the process's streams; returns the exit code. */
  public static int run(String... args) {
    // The live progress line only on a terminal: never in pipes, files or captured output.
    return run(System.out, System.err, System.console() != null, args);
  }

  /** Runs {@code drain|cordon|uncordon ARGS} writing to the given streams. */
  public static int run(PrintStream out, PrintStream err, boolean terminal, String... args) {
    CommandLine root = new CommandLine(new NodeCli());
    // Only the command asked for is built (picocli reads each command's annotations when added,
    // a cost at every start); all three for anything else (the usage lists them).
    String only = args.length > 0 && COMMANDS.contains(args[0]) ? args[0] : null;
    if (only == null || only.equals("drain")) {
      root.addSubcommand("drain", new DrainCommand(out, err, null, terminal));
    }
    if (only == null || only.equals("cordon")) {
      root.addSubcommand("cordon", new CordonCommand(true, out, err, null));
      root.getSubcommands()
          .get("cordon")
          .getCommandSpec()
          .usageMessage()
          .description("Mark node as unschedulable.");
    }
    if (only == null || only.equals("uncordon")) {
      root.addSubcommand("uncordon", new CordonCommand(false, out, err, null));
      root.getSubcommands()
          .get("uncordon")
          .getCommandSpec()
          .usageMessage()
          .description("Mark node as schedulable.");
    }
    root.setOut(new PrintWriter(out, true));
    root.setErr(new PrintWriter(err, true));
    root.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          // Never a stack trace: one line, the exception's type when it has no message.
          err.println(
              "error: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
          return DrainCommand.EXIT_FAILED;
        });
    root.setParameterExceptionHandler(
        (e, a) -> {
          err.println("error: " + kubectlWording(e));
          err.println("See '" + fullName(e.getCommandLine()) + " --help' for usage.");
          return DrainCommand.EXIT_FAILED;
        });
    if (args.length == 0) {
      root.usage(new PrintWriter(err, true));
      return DrainCommand.EXIT_FAILED;
    }
    return root.execute(args);
  }

  /** pflag's wording for an unknown flag, which scripts and people know; picocli's otherwise. */
  private static String kubectlWording(CommandLine.ParameterException e) {
    if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
      String arg = u.getUnmatched().get(0);
      if (arg.startsWith("--")) {
        int eq = arg.indexOf('=');
        return "unknown flag: " + (eq < 0 ? arg : arg.substring(0, eq));
      }
      if (arg.startsWith("-") && arg.length() > 1) {
        return "unknown shorthand flag: '" + arg.charAt(1) + "' in " + arg;
      }
    }
    return e.getMessage();
  }

  private static String fullName(CommandLine cl) {
    return cl.getParent() == null ? NAME : NAME + " " + cl.getCommandName();
  }

  /** kubectl's usage error: the message, a hint, exit 1. */
  static int usageError(PrintStream err, String command, String message) {
    err.println(message.startsWith("error: ") ? message : "error: " + message);
    err.println("See '" + NAME + " " + command + " -h' for help and examples");
    return DrainCommand.EXIT_FAILED;
  }

  /**
   * The nodes the arguments name, all checked before anything changes; empty after printing
   * kubectl's error.
   */
  static Optional<List<String>> resolve(
      NodeTargets targets, NodeDrainer drainer, String command, PrintStream err) {
    try {
      return Optional.of(targets.resolve(drainer));
    } catch (NodeNotFoundException e) {
      err.println("Error from server (NotFound): nodes \"" + e.node() + "\" not found");
    } catch (ApiException e) {
      err.println(resolveError(targets, command, e));
    }
    return Optional.empty();
  }

  /**
   * A failed look-up of the nodes, worded as kubectl's resource builder words it when the server
   * answered ({@code Error from server (BadRequest): Unable to find "/v1, Resource=nodes" that
   * match label selector "a in (b", field selector "": unable to parse requirement: ...}); without
   * an answer, what happened to the request.
   */
  static String resolveError(NodeTargets targets, String command, ApiException e) {
    ApiStatus status = ApiStatus.of(e);
    if (e.getCode() == 0 || status.message().isEmpty()) {
      String subject =
          targets.names.size() == 1 ? "node \"" + targets.names.get(0) + "\"" : "nodes";
      return "error: unable to " + command + " " + subject + ": " + ApiStatus.describe(e);
    }
    String lookup =
        targets.bySelector() && targets.names.isEmpty()
            ? "Unable to find \"/v1, Resource=nodes\" that match label selector \""
                + targets.selector
                + "\", field selector \"\": "
            : "";
    String reason = status.reason().isEmpty() ? "Unknown" : status.reason();
    return "Error from server (" + reason + "): " + lookup + status.message();
  }

  /**
   * kubectl's cordon pass: each node in turn, one line each; a failure is reported and the others
   * still go.
   *
   * @return true if every node is in the desired state (or, in a dry run, would be)
   */
  static boolean setUnschedulable(
      NodeDrainer drainer,
      List<String> nodes,
      boolean cordon,
      DryRun dryRun,
      PrintStream out,
      PrintStream err) {
    boolean ok = true;
    for (String node : nodes) {
      try {
        boolean changed = drainer.setUnschedulable(node, cordon, dryRun);
        out.println(
            ConsoleReporter.cordonLine(node, cordon, changed, ConsoleReporter.suffix(dryRun)));
      } catch (ApiException e) {
        err.println(
            "error: unable to "
                + (cordon ? "cordon" : "uncordon")
                + " node \""
                + node
                + "\": "
                + serverError(e));
        ok = false;
      }
    }
    return ok;
  }

  /**
   * An API error as kubectl prints it: the server's own message (a StatusError's text), else what
   * happened to the request.
   */
  static String serverError(ApiException e) {
    String message = e.getCode() == 0 ? "" : ApiStatus.of(e).message();
    return message.isEmpty() ? ApiStatus.describe(e) : message;
  }
}
