/**
 * Log lines that tell a lasting state once, not at every retry: a waiting step's line at INFO only
 * when what it waits for changes ({@link dev.capk.vmieviction.logging.WaitLog}), and an informer's
 * repeated failures backed off and told with a count ({@link
 * dev.capk.vmieviction.logging.InformerFailures}). Also how logback is set up: a CLI process's
 * configuration and {@code -v} levels ({@link dev.capk.vmieviction.logging.CliLogbackConfigurator},
 * {@link dev.capk.vmieviction.logging.CliLogging}), and the client's informer-stop errors dropped
 * ({@link dev.capk.vmieviction.logging.InformerStopInterrupts}). Imports nothing of this project.
 */
package dev.capk.vmieviction.logging;
