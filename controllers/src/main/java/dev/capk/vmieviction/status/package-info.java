/**
 * The {@code status} command: the evacuations in progress, read from the infra cluster alone (VMIs
 * and their Events, one list each). {@link dev.capk.vmieviction.status.EvacuationStatuses} reads
 * each VMI's phase as the controller recorded it, and its deadline and blocker from what the
 * controller wrote (pure, tested as tables), {@link dev.capk.vmieviction.status.StatusOutput}
 * prints it, {@link dev.capk.vmieviction.status.StatusCommand} does the reading. May import {@code
 * api}, {@code drain.cli} (the kubeconfig flags), {@code eviction} (event reasons), {@code kube},
 * {@code logging} (a CLI process's log levels), {@code time} and {@code workload} (event reasons);
 * nothing imports it but the manager's {@code Main}.
 */
package dev.capk.vmieviction.status;
