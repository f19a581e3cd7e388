/**
 * Log lines that tell a lasting state once, not at every retry: a waiting step's line at INFO only
 * when what it waits for changes ({@link dev.capk.vmieviction.logging.WaitLog}), and an informer's
 * repeated failures backed off and told with a count ({@link
 * dev.capk.vmieviction.logging.InformerFailures}, which also gives informers their paged lists).
 * Also how logback is set up, in code, with a CLI process's {@code -v} levels and the client's
 * informer-stop errors dropped ({@link dev.capk.vmieviction.logging.LogbackConfigurator}). Imports
 * nothing of this project.
 */
package dev.capk.vmieviction.logging;
