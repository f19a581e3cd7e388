package dev.capk.vmieviction.e2e.demo;

import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Tells what happens, as it happens: every 200 ms it reads the VMIs of each tenant and their guest
 * nodes, and prints one line for each change a person would want to see; and the first time a VMI
 * is held by tenant protection (or goes ahead anyway), the controller's event saying so.
 */
final class Narrator implements AutoCloseable {
  private static final Set<String> TENANT_PROTECTION =
      Set.of("EvacuationHeld", "QuorumGuardOverridden", "DisruptionLimitOverridden");

  private final DynamicKubernetesApi vmis;
  private final CoreV1Api infraCore;
  private final List<TenantCluster> tenants;
  private final long start = System.nanoTime();
  private final Map<String, String> last = new HashMap<>();
  private final ScheduledExecutorService loop =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "demo-narrator");
            t.setDaemon(true);
            return t;
          });

  Narrator(io.kubernetes.client.openapi.ApiClient infra, List<TenantCluster> tenants) {
    this.vmis = new DynamicKubernetesApi("kubevirt.io", "v1", "virtualmachineinstances", infra);
    this.infraCore = new CoreV1Api(infra);
    this.tenants = tenants;
  }

  void start() {
    loop.scheduleWithFixedDelay(this::look, 0, 200, TimeUnit.MILLISECONDS);
  }

  synchronized void say(String who, String what) {
    System.out.printf("[%6.1fs] %-10s %s%n", (System.nanoTime() - start) / 1e9, who, what);
  }

  private void look() {
    try {
      for (TenantCluster t : tenants) {
        for (String vm : t.vms()) {
          lookAtVmi(t, vm);
          lookAtGuestNode(t, vm);
        }
        lookAtTenantProtectionEvents(t);
      }
    } catch (Exception e) {
      // A transient read error: the next look catches up.
    }
  }

  private void lookAtVmi(TenantCluster t, String vm) {
    var r = vmis.get(t.namespace(), vm);
    String key = "vmi " + t.namespace() + "/" + vm;
    String state;
    if (!r.isSuccess()) {
      state = "gone";
    } else {
      DynamicKubernetesObject o = r.getObject();
      var status = o.getRaw().getAsJsonObject("status");
      String phase =
          status != null && status.has("phase") ? status.get("phase").getAsString() : "Pending";
      String node =
          status != null && status.has("nodeName") ? status.get("nodeName").getAsString() : "-";
      String evac =
          status != null
                  && status.has("evacuationNodeName")
                  && !status.get("evacuationNodeName").isJsonNull()
              ? status.get("evacuationNodeName").getAsString()
              : null;
      String uid = o.getMetadata().getUid().substring(0, 8);
      if (o.getMetadata().getDeletionTimestamp() != null) {
        state = "deleting uid " + uid;
      } else if (evac != null) {
        state = "evacuating from " + evac + " (uid " + uid + ")";
      } else {
        state = phase + " on " + node + " (uid " + uid + ")";
      }
    }
    if (!Objects.equals(last.put(key, state), state)) {
      say("infra", "VMI " + t.namespace() + "/" + vm + ": " + state);
    }
  }

  private void lookAtTenantProtectionEvents(TenantCluster t) throws Exception {
    for (CoreV1Event e : infraCore.listNamespacedEvent(t.namespace()).execute().getItems()) {
      if (TENANT_PROTECTION.contains(e.getReason())) {
        String key = "event " + t.namespace() + "/" + e.getInvolvedObject().getName();
        String what = e.getReason();
        if (!Objects.equals(last.put(key + " " + what, what), what)) {
          say(
              "controller",
              "VMI " + e.getInvolvedObject().getName() + " " + what + ": " + e.getMessage());
        }
      }
    }
  }

  private void lookAtGuestNode(TenantCluster t, String vm) throws Exception {
    CoreV1Api core = new CoreV1Api(t.guest().client());
    V1Node node = core.readNode(vm).execute();
    boolean cordoned = Boolean.TRUE.equals(node.getSpec().getUnschedulable());
    boolean ready =
        node.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    long pods =
        core
            .listPodForAllNamespaces()
            .fieldSelector("spec.nodeName=" + vm)
            .execute()
            .getItems()
            .stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .count();
    String state =
        (cordoned ? "cordoned" : "schedulable")
            + ", "
            + (ready ? "Ready" : "NotReady")
            + ", "
            + pods
            + " pods";
    String key = "node " + t.name() + "/" + vm;
    if (!Objects.equals(last.put(key, state), state)) {
      say(t.name(), "guest node " + vm + ": " + state);
    }
  }

  @Override
  public void close() {
    loop.shutdownNow();
  }
}
