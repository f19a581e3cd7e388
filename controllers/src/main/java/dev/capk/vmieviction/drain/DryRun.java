package dev.capk.vmieviction.drain;

/** kubectl's {@code --dry-run} strategies. */
public enum DryRun {
  /** Change the cluster. */
  NONE,
  /** Change nothing and send nothing that changes: cordon and evictions are only reported. */
  CLIENT,
  /**
   * Send every change with {@code dryRun=All}: the server validates (admission, budgets) and
   * persists nothing.
   */
  SERVER
}
