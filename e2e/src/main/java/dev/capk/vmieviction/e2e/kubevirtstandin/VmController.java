package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.util.generic.options.DeleteOptions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stand-in for KubeVirt's VirtualMachine controller and virt-handler, as far as the API shows them:
 * a VM that should run gets a VMI (new UID each time); a VMI gets a virt-launcher pod that the real
 * scheduler places; when the pod runs, the VMI is Running on that node; a Running VMI whose pod
 * vanished (evicted with strategy None) fails and is deleted, so its VM starts a new one.
 */
final class VmController implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VmController.class);

  private final KubeVirtObjects kubevirt;
  private final LauncherPods launchers;
  private final Migrator migrator;
  private final GuestNodeHook guestHook;

  /** Which VMI UID each namespace/name last ran as, to tell the guest hook about restarts. */
  private final Map<String, String> runningUid = new ConcurrentHashMap<>();

  private final ScheduledExecutorService loop =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "standin-vm-controller");
            t.setDaemon(true);
            return t;
          });

  VmController(
      KubeVirtObjects kubevirt,
      LauncherPods launchers,
      Migrator migrator,
      GuestNodeHook guestHook) {
    this.kubevirt = kubevirt;
    this.launchers = launchers;
    this.migrator = migrator;
    this.guestHook = guestHook;
  }

  void start() {
    loop.scheduleWithFixedDelay(this::syncSafely, 0, 200, TimeUnit.MILLISECONDS);
  }

  private void syncSafely() {
    try {
      sync();
    } catch (Exception e) {
      LOG.warn(
          "stand-in VM controller pass failed (retrying): {}",
          e.toString(),
          e instanceof RuntimeException ? e : null);
    }
  }

  private void sync() throws ApiException {
    Map<String, DynamicKubernetesObject> vmis = new HashMap<>();
    for (DynamicKubernetesObject vmi : kubevirt.allVmis()) {
      vmis.put(key(vmi), vmi);
    }
    Map<String, V1Pod> podByVmiUid = new HashMap<>();
    for (V1Pod pod : launchers.all()) {
      attempt(
          "index launcher pod " + pod.getMetadata().getName(),
          () -> {
            String uid = LauncherPods.vmiUid(pod);
            if (uid != null && pod.getMetadata().getDeletionTimestamp() == null) {
              // During a migration two pods exist: the one on the VMI's node counts.
              podByVmiUid.merge(uid, pod, (a, b) -> LauncherPods.isRunning(a) ? a : b);
            }
          });
    }
    // One VM or VMI that cannot be handled (say, its namespace is being deleted) must not stall the
    // others: each is tried on its own, and retried on the next pass.
    for (DynamicKubernetesObject vm : kubevirt.allVms()) {
      if (shouldRun(vm)
          && !vmis.containsKey(key(vm))
          && vm.getMetadata().getDeletionTimestamp() == null) {
        attempt("start a VMI for VM " + key(vm), () -> createVmi(vm));
      }
    }
    for (DynamicKubernetesObject vmi : vmis.values()) {
      attempt(
          "sync VMI " + key(vmi),
          () -> syncVmi(vmi, Optional.ofNullable(podByVmiUid.get(vmi.getMetadata().getUid()))));
    }
    for (String k : List.copyOf(runningUid.keySet())) {
      if (!vmis.containsKey(k)) {
        runningUid.remove(k);
        String[] nsName = k.split("/", 2);
        attempt("report VM " + k + " stopped", () -> guestHook.vmStopped(nsName[0], nsName[1]));
      }
    }
  }

  private void syncVmi(DynamicKubernetesObject vmi, Optional<V1Pod> pod) throws ApiException {
    if (vmi.getMetadata().getDeletionTimestamp() != null) {
      return;
    }
    String phase = Vmi.string(vmi.getRaw(), "status", "phase").orElse("");
    String namespace = vmi.getMetadata().getNamespace();
    String name = vmi.getMetadata().getName();
    if (!"Running".equals(phase)) {
      if (pod.isEmpty()) {
        launchers.create(vmi, null);
      } else if (LauncherPods.isRunning(pod.get())) {
        JsonObject status = new JsonObject();
        status.addProperty("phase", "Running");
        status.addProperty("nodeName", pod.get().getSpec().getNodeName());
        kubevirt.patchVmiStatus(namespace, name, status);
        String previous = runningUid.put(key(vmi), vmi.getMetadata().getUid());
        if (previous != null && !previous.equals(vmi.getMetadata().getUid())) {
          guestHook.vmStopped(namespace, name);
        }
        guestHook.vmRunning(namespace, name, pod.get().getSpec().getNodeName());
        LOG.info(
            "stand-in: VMI {}/{} running on {}",
            namespace,
            name,
            pod.get().getSpec().getNodeName());
      }
      return;
    }
    if (pod.isEmpty() && !migrator.isMigrating(vmi.getMetadata().getUid())) {
      // The launcher pod is gone under a running VMI: the VM died. KubeVirt fails the VMI; the VM
      // controller then removes it and starts a new one.
      JsonObject status = new JsonObject();
      status.addProperty("phase", "Failed");
      kubevirt.patchVmiStatus(namespace, name, status);
      kubevirt.vmis.delete(namespace, name, new DeleteOptions());
      LOG.info("stand-in: VMI {}/{} lost its launcher pod: Failed and deleted", namespace, name);
    }
  }

  private interface Step {
    void run() throws ApiException;
  }

  private void attempt(String what, Step step) {
    try {
      step.run();
    } catch (ApiException | RuntimeException e) {
      String detail = e instanceof ApiException api ? "HTTP " + api.getCode() : e.toString();
      LOG.warn(
          "stand-in VM controller could not {} (retrying): {}",
          what,
          detail,
          e instanceof RuntimeException ? e : null);
    }
  }

  private void createVmi(DynamicKubernetesObject vm) throws ApiException {
    JsonObject template = Vmi.object(vm.getRaw(), "spec", "template").orElseGet(JsonObject::new);
    JsonObject metadata =
        Vmi.object(template, "metadata").map(JsonObject::deepCopy).orElseGet(JsonObject::new);
    metadata.addProperty("name", vm.getMetadata().getName());
    metadata.addProperty("namespace", vm.getMetadata().getNamespace());
    JsonObject owner = new JsonObject();
    owner.addProperty("apiVersion", "kubevirt.io/v1");
    owner.addProperty("kind", "VirtualMachine");
    owner.addProperty("name", vm.getMetadata().getName());
    owner.addProperty("uid", vm.getMetadata().getUid());
    owner.addProperty("controller", true);
    owner.addProperty("blockOwnerDeletion", true);
    JsonArray owners = new JsonArray();
    owners.add(owner);
    metadata.add("ownerReferences", owners);
    JsonObject raw = new JsonObject();
    raw.addProperty("apiVersion", "kubevirt.io/v1");
    raw.addProperty("kind", "VirtualMachineInstance");
    raw.add("metadata", metadata);
    raw.add(
        "spec", Vmi.object(template, "spec").map(JsonObject::deepCopy).orElseGet(JsonObject::new));
    var created = kubevirt.vmis.create(new DynamicKubernetesObject(raw));
    if (created.getHttpStatusCode() != 409) {
      created.throwsApiException();
      LOG.info(
          "stand-in: VM {}/{} started a new VMI (uid {})",
          vm.getMetadata().getNamespace(),
          vm.getMetadata().getName(),
          created.getObject().getMetadata().getUid());
    }
  }

  private static boolean shouldRun(DynamicKubernetesObject vm) {
    JsonObject raw = vm.getRaw();
    if (Vmi.string(raw, "spec", "running").map(Boolean::parseBoolean).orElse(false)) {
      return true;
    }
    String strategy = Vmi.string(raw, "spec", "runStrategy").orElse("");
    return strategy.equals("Always") || strategy.equals("RerunOnFailure");
  }

  private static String key(DynamicKubernetesObject o) {
    return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
  }

  @Override
  public void close() {
    loop.shutdownNow();
    try {
      loop.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
