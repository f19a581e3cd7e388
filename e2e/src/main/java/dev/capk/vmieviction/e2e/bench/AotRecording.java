package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.RecordingProxy;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import dev.capk.vmieviction.training.Recording;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code make aot-recording} ({@code -Dbench.only=aot-recording}, on request only): records the
 * evacuation the controller's ahead-of-time cache is trained on (training/, replayed at image build
 * and by {@code mvn package}) into training/src/main/resources/evacuation.jsonl. The controller
 * (the Deployment's JVM, 16 workers) starts through a {@link RecordingProxy} in front of an infra
 * and a guest cluster; then the real {@code kubectl drain} of the infra node holding 2 External
 * VMIs of one tenant, 4 pods per guest node under a budget of maxUnavailable 1 (evictions refused
 * with 429 in turn), until the VMIs run again and the controller has uncordoned their guest nodes.
 */
final class AotRecording extends Bench {
  static final List<String> CONTROLLER_FLAGS = List.of("--workers=16");

  @Override
  void run() throws Exception {
    int vmis = Integer.getInteger("bench.aot.vmis", 2);
    int pods = Integer.getInteger("bench.aot.pods", 4);
    Path file =
        Path.of(
            System.getProperty(
                "bench.aot.recording",
                RepoPaths.root()
                    .resolve("training/src/main/resources/" + Recording.RESOURCE)
                    .toString()));
    List<LocalCluster> clusters = startClusters("aot", 1, null, null, true);
    List<DrainWorld> worlds = new ArrayList<>();
    try (RecordingProxy proxy =
        new RecordingProxy(work.resolve("recording.jsonl"), CONTROLLER_FLAGS)) {
      LocalCluster infra = clusters.get(0);
      DrainWorld world = new DrainWorld(infra, clusters.subList(1, 2), "aot", vmis, pods, true);
      worlds.add(world);
      world.setBudgets(true);
      world.spares(true);
      proxy.route(Recording.INFRA, infra.kubeconfigFor(AuditLog.USER, "system:masters"));
      for (TenantCluster t : world.tenants()) {
        String target = "guest:" + t.namespace() + "/" + t.name() + "-kubeconfig";
        proxy.route(target, clusters.get(1).kubeconfigFor(AuditLog.USER, "system:masters"));
        t.useKubeconfig(proxy.kubeconfig(target));
      }
      Path kubeconfig =
          Files.writeString(work.resolve("infra.kubeconfig"), proxy.kubeconfig(Recording.INFRA));
      List<String> flags = new ArrayList<>(List.of("--kubeconfig=" + kubeconfig));
      flags.addAll(CONTROLLER_FLAGS);
      progress(
          "aot-recording: %d VMIs, %d pods per guest node, budget; controller through the proxy",
          vmis, pods);
      // Without the cache: training one would replay the recording this one replaces, which fails
      // once the controller's requests changed.
      List<String> jvm =
          ControllerJar.JVM.stream().filter(f -> !f.startsWith(ControllerJar.AOT_CACHE)).toList();
      try (ControllerProcess p =
          ControllerJar.start(
              "aot-recording", work, ControllerJar.ENV, jvm, flags, Duration.ofMinutes(2))) {
        DrainWorld.Drained d = world.drain(p.pid(), false, null);
        progress("aot-recording: %s", d);
      }
    } finally {
      DrainWorld.closeAll(worlds, clusters);
    }
    Files.createDirectories(file.getParent());
    Files.copy(
        work.resolve("recording.jsonl"), file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    long lines = Files.lines(file).count();
    progress("aot-recording: %d records written to %s", lines, file);
    report.note(
        Report.f(
            "The evacuation for the ahead-of-time cache recorded: %d records in `%s`.",
            lines, RepoPaths.root().relativize(file)));
  }
}
