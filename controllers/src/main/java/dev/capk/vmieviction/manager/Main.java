package dev.capk.vmieviction.manager;

import dev.capk.vmieviction.logging.LogbackConfigurator;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import sun.misc.Signal;

/**
 * Entry point of the jar: {@code drain}, {@code cordon}, {@code uncordon} (kubectl's flags and
 * output) and {@code status} commands; anything else starts the controller manager.
 */
public final class Main {

  private static final Set<String> NODE_COMMANDS = Set.of("drain", "cordon", "uncordon");

  private Main() {}

  public static void main(String[] args) {
    if (args.length > 0 && (NODE_COMMANDS.contains(args[0]) || "status".equals(args[0]))) {
      // Before any logger exists: the command's -v then sets this process's log levels.
      System.setProperty(LogbackConfigurator.PROPERTY, "cli");
    }
    System.exit(run(args));
  }

  public static int run(String... args) {
    if (args.length > 0 && NODE_COMMANDS.contains(args[0])) {
      return dev.capk.vmieviction.drain.cli.NodeCli.run(args);
    }
    if (args.length > 0 && "status".equals(args[0])) {
      return dev.capk.vmieviction.status.StatusCommand.run(System.out, System.err, args);
    }
    ManagerOptions options;
    try {
      options = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      if (e.getCause() instanceof CommandLine.ParameterException) {
        System.err.println("Try --help.");
      }
      return 2;
    }
    if (options == null) {
      return 0;
    }
    Manager manager = new Manager(options);
    Runnable stop = manager::close;
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "shutdown"));
    // A pod is stopped by SIGTERM: a stop asked for, so exit 0 once stopped (the JVM's own
    // handling would exit 143 mid-way through the shutdown hooks). Ctrl-C alike.
    for (String signal : List.of("TERM", "INT")) {
      Signal.handle(
          new Signal(signal),
          s -> {
            stop.run();
            System.exit(0);
          });
    }
    try {
      manager.start();
      boolean leaseLost = manager.awaitTermination();
      stop.run();
      return leaseLost ? 1 : 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop.run();
      return 1;
    } catch (Exception e) {
      // Messages of startup failures name files and flags, never their content.
      Logger log = LoggerFactory.getLogger(Main.class);
      log.error("manager failed to start error=\"{}\"", e.toString());
      stop.run();
      return 1;
    }
  }

  /** For tests; IllegalArgumentException: bad flags. */
  public static Manager start(String... args) throws java.io.IOException {
    return new Manager(parse(args)).start();
  }

  /** The flags, checked; null when they asked for help or the version (printed). */
  private static ManagerOptions parse(String... args) {
    ManagerOptions options = new ManagerOptions();
    try {
      if (CommandLine.printHelpIfRequested(ManagerOptions.commandLine(options).parseArgs(args))) {
        return null;
      }
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    List<String> problems = options.validate();
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("\nerror: ", problems));
    }
    return options;
  }
}
