/**
 * Shards (with {@code --shard-infra-clusters}: the infra clusters) shared out among the replicas
 * through Leases, the Kubernetes API being the only coordination: {@link
 * dev.capk.vmieviction.shards.ShardPlan} decides which shards a replica should hold (pure, tested
 * as a table), {@link dev.capk.vmieviction.shards.ShardLeases} keeps the membership and shard
 * Leases. It knows nothing of infra clusters: a shard is a key. May import only {@code kube} and
 * {@code time}.
 */
package dev.capk.vmieviction.shards;
