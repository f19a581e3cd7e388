package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.drain.DryRun;
import io.kubernetes.client.openapi.ApiClient;
import java.io.PrintStream;
import java.util.List;

/**
 * {@code cordon} and {@code uncordon NODE... | -l SELECTOR}: mark nodes unschedulable or
 * schedulable again, with kubectl's flags, lines and exit codes. One class for both, since they
 * differ only in the value they set.
 */
public final class CordonCommand extends NodeCommand {
  private final boolean cordon;

  CordonCommand(boolean cordon, PrintStream out, PrintStream err) {
    super(cordon ? "cordon" : "uncordon", out, err);
    this.cordon = cordon;
  }

  @Override
  int run(ApiClient client, List<String> nodes, DryRun strategy) {
    // kubectl prints each node's refusal ("error: unable to cordon node ...") and still exits 0
    // (RunCordonOrUncordon returns no error for them): a drop-in does the same.
    setUnschedulable(nodes, cordon, strategy);
    return EXIT_OK;
  }
}
