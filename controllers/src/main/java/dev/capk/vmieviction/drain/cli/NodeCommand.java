package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.Cordoner;
import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DryRun;
import dev.capk.vmieviction.kube.RawApi;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1NodeList;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code cordon} and {@code uncordon NODE... | -l SELECTOR} (they differ only in the value they
 * set), and what {@code drain} shares with them: kubectl's two ways to name nodes (never both,
 * never neither), the connection flags, {@code --dry-run}, and every node resolved before any
 * change, as kubectl does. Errors are kubectl's lines; exit 1.
 */
// No method is a subcommand: picocli then skips reading every method's annotations, a cost at
// every start (so on each command class here, and the mixin).
@Command(addMethodSubcommands = false)
class NodeCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(NodeCommand.class);

  @Parameters(
      arity = "0..*",
      paramLabel = "NODE",
      description = "The nodes to act on (or use -l/--selector).")
  List<String> names = new ArrayList<>();

  @Option(
      names = {"-l", "--selector"},
      paramLabel = "SELECTOR",
      description =
          "Selector (label query) to filter nodes on, supports '=', '==', '!=', 'in', 'notin'.")
  String selector;

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

  final String name;
  final PrintStream out;
  final PrintStream err;

  /** Set once connected. */
  Cordoner cordoner;

  NodeCommand(String name, PrintStream out, PrintStream err) {
    this.name = name;
    this.out = out;
    this.err = err;
  }

  /** Checks the command's own flags before anything is sent (kubectl's wording if bad). */
  void check(DryRun strategy) {}

  /** Acts on the resolved nodes; returns the exit code. */
  int run(ApiClient client, List<String> nodes, DryRun strategy) {
    // kubectl prints each node's refusal ("error: unable to cordon node ...") and still exits 0
    // (RunCordonOrUncordon returns no error for them): a drop-in does the same.
    setUnschedulable(nodes, name.equals("cordon"), strategy);
    return 0;
  }

  /** Whether the command sends requests at once (a drain's evictions), else one after another. */
  boolean concurrent() {
    return false;
  }

  /** Bad flags and kubeconfig problems are thrown: {@link NodeCli#execute} prints their line. */
  @Override
  public final Integer call() {
    if (names.isEmpty() && selector == null) {
      return usageError("USAGE: " + name + " NODE [flags]");
    }
    if (!names.isEmpty() && selector != null && !selector.isEmpty()) {
      return usageError("cannot specify both a node name and a --selector option");
    }
    DryRun strategy = parseDryRun(dryRun);
    check(strategy);
    ApiClient client = connection.connect(System.getenv(), !concurrent());
    try {
      cordoner = new Cordoner(new RawApi(client));
      List<String> nodes = names.stream().distinct().toList();
      if (names.isEmpty()) {
        nodes = nodesMatching(client, selector);
      }
      for (String node : names) { // kubectl resolves all its arguments before it changes any node
        if (cordoner.read(node).isEmpty()) {
          err.println("Error from server (NotFound): nodes \"" + node + "\" not found");
          return 1;
        }
      }
      return run(client, nodes, strategy);
    } catch (ApiException e) {
      err.println(resolveError(e));
      return 1;
    } finally {
      ConnectionOptions.close(client);
    }
  }

  /** The nodes matching a label selector (checked by the server), by name, page by page. */
  private static List<String> nodesMatching(ApiClient client, String selector) throws ApiException {
    RawApi api = new RawApi(client);
    List<String> names = new ArrayList<>();
    String token = null;
    do {
      CoreV1Api.APIlistNodeRequest req =
          new CoreV1Api(client)
              .listNode()
              .limit(DrainOptions.DEFAULT_CHUNK_SIZE)
              .labelSelector(selector.isBlank() ? null : selector)
              ._continue(token);
      V1NodeList page = api.get(req.buildCall(null), V1NodeList.class);
      page.getItems().forEach(n -> names.add(n.getMetadata().getName()));
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return names;
  }

  /** kubectl's usage error: the message, a hint, exit 1. */
  private int usageError(String message) {
    err.println("error: " + message);
    err.println("See '" + NodeCli.NAME + " " + name + " -h' for help and examples");
    return 1;
  }

  /**
   * A failed look-up of the nodes, worded as kubectl's resource builder words it when the server
   * answered ({@code Error from server (BadRequest): Unable to find "/v1, Resource=nodes" that
   * match label selector "a in (b", field selector "": unable to parse requirement: ...}); without
   * an answer, what happened to the request.
   */
  private String resolveError(ApiException e) {
    RawApi.Status status = RawApi.Status.parse(e.getResponseBody());
    if (e.getCode() == 0 || status.message().isEmpty()) {
      String subject = names.size() == 1 ? "node \"" + names.get(0) + "\"" : "nodes";
      return "error: unable to " + name + " " + subject + ": " + RawApi.describe(e);
    }
    String lookup =
        names.isEmpty()
            ? "Unable to find \"/v1, Resource=nodes\" that match label selector \"%s\", field selector \"\": "
                .formatted(selector)
            : "";
    String reason = status.reason().isEmpty() ? "Unknown" : status.reason();
    return "Error from server (" + reason + "): " + lookup + status.message();
  }

  /**
   * kubectl's cordon pass: each node in turn, one line each ({@code node/x cordoned}, {@code node/x
   * already uncordoned}); a failure is reported and the others still go.
   *
   * @return true if every node is in the desired state (or, in a dry run, would be)
   */
  boolean setUnschedulable(List<String> nodes, boolean cordon, DryRun dry) {
    String verb = cordon ? "cordon" : "uncordon";
    boolean ok = true;
    for (String node : nodes) {
      try {
        boolean changed = cordoner.setUnschedulable(node, cordon, dry);
        // Seen with -v 1 and up (kubectl's levels); at the default verbosity only kubectl's lines.
        LOG.info("node {} node={} changed={} dryRun={}", verb, node, changed, dry);
        out.println("node/" + node + (changed ? " " : " already ") + verb + "ed" + dry.suffix());
      } catch (ApiException e) {
        err.println("error: unable to " + verb + " node \"" + node + "\": " + serverMessage(e));
        ok = false;
      }
    }
    return ok;
  }

  /** The server's own message (a StatusError's text), else what happened to the request. */
  private static String serverMessage(ApiException e) {
    String message = e.getCode() == 0 ? "" : RawApi.Status.parse(e.getResponseBody()).message();
    return message.isEmpty() ? RawApi.describe(e) : message;
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
}
