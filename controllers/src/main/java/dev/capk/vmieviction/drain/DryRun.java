package dev.capk.vmieviction.drain;

/** kubectl's {@code --dry-run} strategies, with the words kubectl adds to its lines for each. */
public enum DryRun {
  NONE(""),
  /** Change nothing and send nothing that changes: cordon and evictions are only reported. */
  CLIENT(" (dry run)"),
  /**
   * Send every change with {@code dryRun=All}: the server validates (admission, budgets) and
   * persists nothing.
   */
  SERVER(" (server dry run)");

  private final String suffix;

  DryRun(String suffix) {
    this.suffix = suffix;
  }

  /** What kubectl appends to a line ("node/x drained (dry run)"). */
  public String suffix() {
    return suffix;
  }
}
