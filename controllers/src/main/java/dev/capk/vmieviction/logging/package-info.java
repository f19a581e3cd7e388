/**
 * Log lines that tell a lasting state once, not at every retry ({@link
 * dev.capk.vmieviction.logging.InformerFailures}, which also makes informers' lists streaming lists
 * or pages), and logback's set-up in code ({@link
 * dev.capk.vmieviction.logging.LogbackConfigurator}). May import only {@code kube} and {@code
 * time}.
 */
package dev.capk.vmieviction.logging;
