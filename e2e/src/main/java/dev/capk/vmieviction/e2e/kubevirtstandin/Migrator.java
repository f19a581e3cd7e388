package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stand-in for a KubeVirt live migration, as the API shows it: a target launcher pod on another
 * node, then the VMI's {@code status.nodeName} moves there, the evacuation mark is cleared, and the
 * source pod is deleted. The VMI keeps its UID.
 */
final class Migrator implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Migrator.class);

  private final CoreV1Api core;
  private final KubeVirtObjects kubevirt;
  private final LauncherPods launchers;
  private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
  private final ExecutorService executor =
      Executors.newFixedThreadPool(
          2,
          r -> {
            Thread t = new Thread(r, "standin-migrator");
            t.setDaemon(true);
            return t;
          });

  Migrator(CoreV1Api core, KubeVirtObjects kubevirt, LauncherPods launchers) {
    this.core = core;
    this.kubevirt = kubevirt;
    this.launchers = launchers;
  }

  boolean isMigrating(String vmiUid) {
    return inFlight.contains(vmiUid);
  }

  /**
   * A migration carried out elsewhere (a VirtualMachineInstanceMigration object) holds the VMI:
   * while it lasts, a missing launcher pod does not mean the VM died. False when one is already
   * under way for the VMI.
   */
  boolean claim(String vmiUid) {
    return inFlight.add(vmiUid);
  }

  void release(String vmiUid) {
    inFlight.remove(vmiUid);
  }

  void migrate(DynamicKubernetesObject vmi, V1Pod source) {
    String uid = vmi.getMetadata().getUid();
    if (!inFlight.add(uid)) {
      return;
    }
    executor.submit(
        () -> {
          try {
            run(vmi, source);
          } catch (Exception e) {
            LOG.warn(
                "stand-in: migration of VMI {}/{} failed: {}",
                vmi.getMetadata().getNamespace(),
                vmi.getMetadata().getName(),
                e.toString());
          } finally {
            inFlight.remove(uid);
          }
        });
  }

  private void run(DynamicKubernetesObject vmi, V1Pod source)
      throws ApiException, InterruptedException {
    String namespace = vmi.getMetadata().getNamespace();
    V1Pod target = launchers.create(vmi, source.getSpec().getNodeName());
    long deadline = System.nanoTime() + 120_000_000_000L;
    V1Pod current = target;
    while (!LauncherPods.isRunning(current)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "target pod " + target.getMetadata().getName() + " never ran");
      }
      Thread.sleep(200);
      current = core.readNamespacedPod(target.getMetadata().getName(), namespace).execute();
    }
    JsonObject status = new JsonObject();
    status.addProperty("nodeName", current.getSpec().getNodeName());
    status.add("evacuationNodeName", JsonNull.INSTANCE);
    kubevirt.patchVmiStatus(namespace, vmi.getMetadata().getName(), status);
    core.deleteNamespacedPod(source.getMetadata().getName(), namespace).execute();
    LOG.info(
        "stand-in: VMI {}/{} migrated {} -> {}",
        namespace,
        vmi.getMetadata().getName(),
        source.getSpec().getNodeName(),
        current.getSpec().getNodeName());
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
