package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stand-in for what KubeVirt's virt-controller and virt-handler do, through the API, with a
 * VirtualMachineInstanceMigration ({@code kubevirt.io/v1}) someone creates. Read from KubeVirt's
 * {@code pkg/virt-controller/watch/migration/migration.go} ({@code processMigrationPhase}, {@code
 * createTargetPod}, {@code handleMarkMigrationFailedOnVMI}) and {@code
 * pkg/virt-handler/migration-target.go} ({@code ackMigrationCompletion}):
 *
 * <ul>
 *   <li>the phases: unset, Pending, Scheduling (a target virt-launcher pod created, never on the
 *       source node: {@code createMigrationPodAntiAffinityRule}), Scheduled (the target pod is
 *       ready), PreparingTarget ({@code status.migrationState} names source and target),
 *       TargetReady (target node known), Running ({@code migrationState.startTimestamp} set), then
 *       Succeeded or Failed;
 *   <li>success ({@code ackMigrationCompletion}): the VMI's {@code status.nodeName} becomes the
 *       target node, {@code status.evacuationNodeName} is cleared, {@code migrationState.completed}
 *       and {@code endTimestamp} are set; then the migration turns Succeeded (Running: "Source node
 *       reported migration succeeded"); the source launcher pod ends (deleted here);
 *   <li>failure ({@code handleMarkMigrationFailedOnVMI}): {@code migrationState.failed} and {@code
 *       completed} set, the migration Failed, the target pod removed; the VMI stays on its source
 *       node and keeps {@code evacuationNodeName};
 *   <li>a migration object deleted before it finished is aborted: its target pod goes, the VMI
 *       stays on the source node with a failed migration state.
 * </ul>
 *
 * <p>What real KubeVirt decides from the guest (whether the migration converges, how long it takes)
 * tests inject on the VMI: annotation {@value #RESULT} ({@code succeed}, the default, or {@code
 * fail}) and {@value #DURATION} (seconds in phase Running, default 1, or {@code hang}: never done).
 * Only tests set these; KubeVirt knows nothing of them.
 */
final class MigrationObjects implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationObjects.class);

  static final String RESULT = "standin.kubevirt.io/migration-result";
  static final String DURATION = "standin.kubevirt.io/migration-duration";
  static final String MIGRATION_JOB_LABEL = "kubevirt.io/migrationJobUID";

  private final CoreV1Api core;
  private final KubeVirtObjects kubevirt;
  private final LauncherPods launchers;
  private final Migrator migrator;
  private final DynamicKubernetesApi migrations;
  private final ScheduledExecutorService loop =
      Executors.newSingleThreadScheduledExecutor(daemon("standin-migration-watch"));
  private final ExecutorService workers = Executors.newFixedThreadPool(8, daemon("standin-vmim"));

  MigrationObjects(
      CoreV1Api core, KubeVirtObjects kubevirt, LauncherPods launchers, Migrator migrator) {
    this.core = core;
    this.kubevirt = kubevirt;
    this.launchers = launchers;
    this.migrator = migrator;
    this.migrations =
        new DynamicKubernetesApi(
            KubeVirtObjects.GROUP,
            KubeVirtObjects.VERSION,
            "virtualmachineinstancemigrations",
            core.getApiClient());
  }

  void start() {
    loop.scheduleWithFixedDelay(this::pollSafely, 0, 200, TimeUnit.MILLISECONDS);
  }

  private void pollSafely() {
    try {
      var list = migrations.list();
      if (list.getHttpStatusCode() == 404 || list.getObject() == null) {
        return; // no CRD installed: nothing to imitate
      }
      com.google.gson.JsonElement items = list.getObject().getRaw().get("items");
      if (items == null || items.isJsonNull()) {
        return;
      }
      for (DynamicKubernetesObject m : list.getObject().getItems()) {
        String phase = Vmi.string(m.getRaw(), "status", "phase").orElse("");
        if (!phase.isEmpty() || m.getMetadata().getDeletionTimestamp() != null) {
          continue; // only new ones; one already taken is walked by its worker
        }
        String vmiName = Vmi.string(m.getRaw(), "spec", "vmiName").orElse("");
        Optional<DynamicKubernetesObject> vmi =
            kubevirt.vmi(m.getMetadata().getNamespace(), vmiName);
        if (vmi.isEmpty()) {
          setPhase(m, "Failed");
          continue;
        }
        // Another migration of the same VMI in progress: this one fails (MigrationPhaseUnset,
        // canMigrateVMI false).
        if (!migrator.claim(vmi.get().getMetadata().getUid())) {
          setPhase(m, "Failed");
          continue;
        }
        setPhase(m, "Pending");
        workers.submit(() -> walk(m, vmi.get()));
      }
    } catch (Exception e) {
      LOG.warn("stand-in: migration pass failed (retrying): {}", e.toString());
    }
  }

  private void walk(DynamicKubernetesObject migration, DynamicKubernetesObject vmi) {
    String ns = vmi.getMetadata().getNamespace();
    String vmiName = vmi.getMetadata().getName();
    String uid = vmi.getMetadata().getUid();
    V1Pod target = null;
    try {
      String sourceNode = Vmi.string(vmi.getRaw(), "status", "nodeName").orElse(null);
      V1Pod source =
          launchers.all().stream()
              .filter(p -> uid.equals(LauncherPods.vmiUid(p)))
              .filter(p -> sourceNode != null && sourceNode.equals(p.getSpec().getNodeName()))
              .findFirst()
              .orElse(null);
      String result = annotation(vmi, RESULT).orElse("succeed");
      String duration = annotation(vmi, DURATION).orElse("1");
      // Pending -> Scheduling: the target pod, kept off the source node.
      target = launchers.create(vmi, sourceNode);
      if (!setPhase(migration, "Scheduling")) {
        abort(ns, vmiName, target, migration);
        return;
      }
      V1Pod running = awaitRunning(target, migration);
      if (running == null) {
        abort(ns, vmiName, target, migration);
        return;
      }
      String targetNode = running.getSpec().getNodeName();
      setPhase(migration, "Scheduled");
      JsonObject state = new JsonObject();
      state.addProperty("migrationUid", migration.getMetadata().getUid());
      state.addProperty("sourceNode", sourceNode);
      state.addProperty("targetNode", targetNode);
      state.addProperty("targetPod", running.getMetadata().getName());
      // A new migration's state replaces the last one's (virt-controller writes a fresh
      // migrationState for each migration): no completed or failed left from an earlier attempt.
      for (String stale : List.of("completed", "failed", "startTimestamp", "endTimestamp")) {
        state.add(stale, JsonNull.INSTANCE);
      }
      JsonObject status = new JsonObject();
      status.add("migrationState", state);
      kubevirt.patchVmiStatus(ns, vmiName, status);
      setPhase(migration, "PreparingTarget");
      setPhase(migration, "TargetReady");
      JsonObject started = new JsonObject();
      started.addProperty("startTimestamp", Instant.now().toString());
      JsonObject startedStatus = new JsonObject();
      startedStatus.add("migrationState", started);
      kubevirt.patchVmiStatus(ns, vmiName, startedStatus);
      if (!setPhase(migration, "Running")) {
        abort(ns, vmiName, target, migration);
        return;
      }
      Instant until =
          duration.equals("hang")
              ? Instant.MAX
              : Instant.now().plus(Duration.ofMillis((long) (Double.parseDouble(duration) * 1000)));
      while (Instant.now().isBefore(until)) {
        if (gone(migration)) {
          abort(ns, vmiName, target, migration);
          return;
        }
        Thread.sleep(200);
      }
      if (gone(migration)) {
        abort(ns, vmiName, target, migration);
        return;
      }
      if (result.equals("fail")) {
        failOnVmi(ns, vmiName, target);
        setPhase(migration, "Failed");
        LOG.info("stand-in: migration {} of VMI {}/{} failed", name(migration), ns, vmiName);
        return;
      }
      // ackMigrationCompletion: the VMI now runs on the target node and is no longer evacuated.
      JsonObject done = new JsonObject();
      done.addProperty("completed", true);
      done.addProperty("endTimestamp", Instant.now().toString());
      JsonObject finalStatus = new JsonObject();
      finalStatus.add("migrationState", done);
      finalStatus.addProperty("nodeName", targetNode);
      finalStatus.add("evacuationNodeName", JsonNull.INSTANCE);
      kubevirt.patchVmiStatus(ns, vmiName, finalStatus);
      setPhase(migration, "Succeeded");
      if (source != null) {
        core.deleteNamespacedPod(source.getMetadata().getName(), ns).execute();
      }
      LOG.info(
          "stand-in: migration {} moved VMI {}/{} {} -> {}",
          name(migration),
          ns,
          vmiName,
          sourceNode,
          targetNode);
    } catch (Exception e) {
      LOG.warn("stand-in: migration {} could not go on: {}", name(migration), e.toString());
    } finally {
      migrator.release(uid);
    }
  }

  private V1Pod awaitRunning(V1Pod target, DynamicKubernetesObject migration)
      throws ApiException, InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    V1Pod current = target;
    while (!LauncherPods.isRunning(current)) {
      if (System.nanoTime() > giveUp || gone(migration)) {
        return null;
      }
      Thread.sleep(200);
      current =
          core.readNamespacedPod(
                  target.getMetadata().getName(), target.getMetadata().getNamespace())
              .execute();
    }
    return current;
  }

  /** The migration object was deleted (or is being): abort, as virt-controller does. */
  private void abort(String ns, String vmiName, V1Pod target, DynamicKubernetesObject migration)
      throws ApiException {
    failOnVmi(ns, vmiName, target);
    LOG.info("stand-in: migration {} of VMI {}/{} aborted", name(migration), ns, vmiName);
  }

  /** handleMarkMigrationFailedOnVMI: failed and completed on the VMI, the target pod removed. */
  private void failOnVmi(String ns, String vmiName, V1Pod target) throws ApiException {
    JsonObject state = new JsonObject();
    state.addProperty("failed", true);
    state.addProperty("completed", true);
    state.addProperty("endTimestamp", Instant.now().toString());
    JsonObject status = new JsonObject();
    status.add("migrationState", state);
    if (kubevirt.vmi(ns, vmiName).isPresent()) {
      kubevirt.patchVmiStatus(ns, vmiName, status);
    }
    if (target != null) {
      var r = core.deleteNamespacedPod(target.getMetadata().getName(), ns);
      try {
        r.execute();
      } catch (ApiException e) {
        if (e.getCode() != 404) {
          throw e;
        }
      }
    }
  }

  private boolean gone(DynamicKubernetesObject migration) {
    KubernetesApiResponse<DynamicKubernetesObject> r =
        migrations.get(migration.getMetadata().getNamespace(), migration.getMetadata().getName());
    return r.getHttpStatusCode() == 404
        || (r.getObject() != null && r.getObject().getMetadata().getDeletionTimestamp() != null);
  }

  /** Writes the migration's phase (status subresource); false when the migration is gone. */
  private boolean setPhase(DynamicKubernetesObject migration, String phase) throws ApiException {
    JsonObject status = new JsonObject();
    status.addProperty("phase", phase);
    try {
      kubevirt.patchStatus(
          "virtualmachineinstancemigrations",
          migration.getMetadata().getNamespace(),
          migration.getMetadata().getName(),
          status);
      return true;
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  private static Optional<String> annotation(DynamicKubernetesObject o, String key) {
    var a = o.getMetadata().getAnnotations();
    return a == null ? Optional.empty() : Optional.ofNullable(a.get(key));
  }

  private static String name(DynamicKubernetesObject m) {
    return m.getMetadata().getNamespace() + "/" + m.getMetadata().getName();
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public void close() {
    loop.shutdownNow();
    workers.shutdownNow();
  }
}
