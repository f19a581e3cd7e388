package dev.capk.vmieviction.e2e.scenario;

import dev.capk.vmieviction.e2e.kubevirtstandin.GuestNodeHook;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.util.PatchUtils;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a VM restart does to its guest node: while the VM is down the node's kubelet stops reporting
 * (Ready=False); when it runs again the node is Ready. Maps each VMI to its tenant's guest node.
 */
public final class GuestReboots implements GuestNodeHook {
  private static final Logger LOG = LoggerFactory.getLogger(GuestReboots.class);
  private final Map<String, TenantCluster> tenantByVmi = new ConcurrentHashMap<>();

  public void track(TenantCluster tenant) {
    for (String vm : tenant.vms()) {
      tenantByVmi.put(tenant.namespace() + "/" + vm, tenant);
    }
  }

  @Override
  public void vmStopped(String namespace, String vmiName) {
    setReady(namespace, vmiName, false);
  }

  @Override
  public void vmRunning(String namespace, String vmiName, String infraNode) {
    setReady(namespace, vmiName, true);
  }

  private void setReady(String namespace, String vmiName, boolean ready) {
    TenantCluster tenant = tenantByVmi.get(namespace + "/" + vmiName);
    if (tenant == null) {
      return;
    }
    String now = OffsetDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_INSTANT);
    String patch =
        """
                {"status":{"conditions":[{"type":"Ready","status":"%s","reason":"%s","message":"%s",
                "lastHeartbeatTime":"%s","lastTransitionTime":"%s"}]}}"""
            .formatted(
                ready ? "True" : "False",
                ready ? "KubeletReady" : "VMRestarting",
                ready ? "kubelet is posting ready status" : "the VM is restarting",
                now,
                now);
    try {
      CoreV1Api core = new CoreV1Api(tenant.guest().client());
      PatchUtils.patch(
          Object.class,
          () -> core.patchNodeStatus(vmiName, new V1Patch(patch)).buildCall(null),
          V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH,
          tenant.guest().client());
    } catch (Exception e) {
      LOG.warn("could not set guest node {} Ready={}: {}", vmiName, ready, e.toString());
    }
  }
}
