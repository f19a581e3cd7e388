package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.NodeDrainer;
import io.kubernetes.client.openapi.ApiException;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The nodes a command acts on, in kubectl's two forms: names ({@code NODE...}) or a label selector
 * ({@code -l}), never both, never neither.
 */
final class NodeTargets {
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

  boolean bySelector() {
    return selector != null;
  }

  /** kubectl's usage error for these arguments, or null when they are fine. */
  String usageError(String command) {
    if (names.isEmpty() && !bySelector()) {
      return "USAGE: " + command + " NODE [flags]";
    }
    if (!names.isEmpty() && bySelector() && !selector.isEmpty()) {
      return "error: cannot specify both a node name and a --selector option";
    }
    return null;
  }

  /**
   * The nodes, resolved before anything changes: every name must exist (else {@link
   * dev.capk.vmieviction.drain.NodeNotFoundException}), a selector lists its matches.
   */
  List<String> resolve(NodeDrainer drainer) throws ApiException {
    if (bySelector() && names.isEmpty()) {
      return drainer.nodesMatching(selector);
    }
    List<String> distinct = names.stream().distinct().toList();
    drainer.requireNodes(distinct);
    return distinct;
  }
}
