/**
 * The {@code drain NODE [flags]} command: the drain engine behind {@code kubectl drain}'s flags,
 * output lines and exit codes, with its own kubeconfig loading. May import {@code drain}, {@code
 * kube}, {@code logging} (a CLI process's log levels) and {@code time}; nothing else of this
 * project imports it but the manager's {@code Main} and the {@code status} command (for the same
 * kubeconfig flags and error lines: {@link dev.capk.vmieviction.drain.cli.ConnectionOptions},
 * {@link dev.capk.vmieviction.drain.cli.NodeCli#execute}).
 */
package dev.capk.vmieviction.drain.cli;
