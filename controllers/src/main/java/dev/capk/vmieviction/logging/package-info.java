/**
 * Log lines that tell a lasting state once, not at every retry ({@link
 * dev.capk.vmieviction.logging.InformerFailures}, which also pages informers' lists), and logback's
 * set-up in code ({@link dev.capk.vmieviction.logging.LogbackConfigurator}). Imports nothing of
 * this project.
 */
package dev.capk.vmieviction.logging;
