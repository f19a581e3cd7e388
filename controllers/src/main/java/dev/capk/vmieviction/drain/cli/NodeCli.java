package dev.capk.vmieviction.drain.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The node commands a drop-in for kubectl needs, {@code drain}, {@code cordon} and {@code
 * uncordon}, behind one entry point (the jar's, and the {@code kubectl-fastdrain} plugin's), with
 * kubectl's wording for usage errors and unknown flags (always exit 1).
 */
@Command(
    name = NodeCli.NAME,
    addMethodSubcommands = false,
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
    // Only the command asked for is built (picocli reads each command's annotations when added,
    // a cost at every start); all three for anything else (the usage lists them).
    String only = args.length > 0 && COMMANDS.contains(args[0]) ? args[0] : null;
    if (only != null) {
      ClientWarmUp.start(only.equals("drain"));
    }
    CommandLine root = new CommandLine(new NodeCli());
    if (only == null || only.equals("drain")) {
      root.addSubcommand("drain", new DrainCommand(out, err, terminal));
    }
    for (String name : List.of("cordon", "uncordon")) {
      if (only == null || only.equals(name)) {
        CommandLine sub = new CommandLine(new NodeCommand(name, out, err));
        String un = name.equals("cordon") ? "un" : "";
        sub.getCommandSpec().usageMessage().description("Mark node as " + un + "schedulable.");
        root.addSubcommand(name, sub);
      }
    }
    if (args.length == 0) {
      root.usage(new PrintWriter(err, true));
      return 1;
    }
    return execute(root, out, err, args);
  }

  /**
   * Runs {@code cli} on these streams as kubectl runs a command: a flag error is kubectl's line and
   * a hint, a failure one line without a stack trace; both exit 1.
   */
  public static int execute(CommandLine cli, PrintStream out, PrintStream err, String... args) {
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    cli.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          err.println("error: " + message(e));
          return 1;
        });
    cli.setParameterExceptionHandler(
        (e, a) -> {
          err.println("error: " + kubectlWording(e));
          String name = e.getCommandLine().getCommandSpec().qualifiedName();
          err.println("See '" + name + " --help' for usage.");
          return 1;
        });
    return cli.execute(args);
  }

  /** An exception's message, else its type's name. */
  static String message(Throwable e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
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
}
