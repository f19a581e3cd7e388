package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.ProcessLogs;
import dev.capk.vmieviction.infra.InfraBindings;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1LeaseSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code --shard-infra-clusters} replicas leave in the management cluster and their logs, read
 * from outside: which replica holds which infra cluster's Lease, and since when.
 */
public final class ShardLeaseView {
  private static final Pattern IDENTITY = Pattern.compile("shard leases started .*identity=(\\S+)");

  private ShardLeaseView() {}

  /**
   * A shard Lease's holder (blank: none), last renewal and acquisition, as the API returns them.
   */
  public record Lease(String holder, String renewTime, String acquireTime) {}

  /**
   * A sharded replica's flags, as the controller's ServiceAccount ({@code kubeconfig}), with the
   * tests' short leader-election durations: {@code lease}, a renew deadline of 4 s, retries every
   * second.
   */
  public static List<String> replicaFlags(Path kubeconfig, String id, Duration lease) {
    return List.of(
        "--kubeconfig=" + kubeconfig,
        "--infra-clusters=external",
        "--shard-infra-clusters",
        "--drain-timeout=5m",
        "--leader-election-namespace=" + ControllerServiceAccount.NAMESPACE,
        "--leader-election-id=" + id,
        "--leader-election-lease-duration=" + lease.toSeconds() + "s",
        "--leader-election-renew-deadline=4s",
        "--leader-election-retry-period=1s");
  }

  /**
   * The Lease of the infra cluster reached with {@code infraKubeconfig}, for election id {@code
   * id}.
   */
  public static String name(String id, String infraKubeconfig) {
    return id + "-shard-" + InfraBindings.infraClusterKey(infraKubeconfig);
  }

  /**
   * Lease {@code name} in the controller's namespace; all blank while it does not exist. Read
   * through the API client, not kubectl: callers poll it.
   */
  public static Lease read(KubeCluster management, String name) {
    try {
      V1LeaseSpec spec =
          new CoordinationV1Api(management.client())
              .readNamespacedLease(name, ControllerServiceAccount.NAMESPACE)
              .execute()
              .getSpec();
      return spec == null
          ? new Lease("", "", "")
          : new Lease(
              Objects.toString(spec.getHolderIdentity(), ""),
              Objects.toString(spec.getRenewTime(), ""),
              Objects.toString(spec.getAcquireTime(), ""));
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return new Lease("", "", "");
      }
      throw new IllegalStateException("lease " + name + ": HTTP " + e.getCode(), e);
    }
  }

  /** The identity a replica logs when its shard Leases start; "" before. */
  public static String identity(ControllerProcess p) {
    // The whole log: the line comes early, and a long run pushes it out of any tail.
    Matcher m = IDENTITY.matcher(ProcessLogs.tail(p.log(), Integer.MAX_VALUE));
    return m.find() ? m.group(1) : "";
  }
}
