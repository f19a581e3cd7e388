package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.EvictionSettings.LiveMigrationPolicy;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.workload.GuestClusterRef;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The Cluster's annotations that override a flag (the evacuation limit, the live-migration policy),
 * as the Cluster API read applies them: a valid value wins, an invalid one is the flag's, told once
 * per evacuation, annotation and value.
 */
class ClusterOverrideTest {

  static final Instant T1 = Instant.parse("2025-03-01T12:00:00Z");
  static final Instant T2 = T1.plusSeconds(60);
  final EvacuationLimit flag = EvacuationLimit.parse("3").orElseThrow();
  final Map<String, String> annotations = new HashMap<>();
  final List<String> told = new ArrayList<>();
  final StepContext c =
      StepContextTest.context(
          (vmi, warning, reason, message) -> told.add(reason + ": " + message), flag);
  // From the informer caches only: the KubevirtMachine has no owner Machine, nothing is fetched.
  final MachineContractCheck check =
      new MachineContractCheck(
          new ApiClient(),
          "v1beta1",
          vmi -> new GuestClusterRef("tenant-a", "guest"),
          new MachineContractCheck.Cached(
              (ns, name) ->
                  Optional.of(
                      new Cluster()
                          .metadata(
                              new V1ObjectMeta()
                                  .namespace(ns)
                                  .name(name)
                                  .annotations(new HashMap<>(annotations)))),
              (ns, name) ->
                  Optional.of(
                      new KubevirtMachine().metadata(new V1ObjectMeta().namespace(ns).name(name))),
              (ns, name) -> Optional.empty()));
  final VirtualMachineInstance vmi = TestVmis.vmi("vm-0", "External", "infra-1");

  MachineContractCheck.Applied apply(Instant start) throws Exception {
    MachineContractCheck.Applied applied =
        check.apply(c, "tenant-a/vm-0", vmi, start, Deadline.at(start.plusSeconds(600), c.clock));
    told.removeIf(t -> t.startsWith("MachineContractUnavailable"));
    return applied;
  }

  List<String> reasons() {
    return told.stream().map(t -> t.substring(0, t.indexOf(':'))).toList();
  }

  @Test
  void noAnnotationIsTheFlagAndAValidOneOverridesIt() throws Exception {
    assertEquals(flag, apply(T1).evacuationLimit());
    assertEquals(LiveMigrationPolicy.NEVER, apply(T1).liveMigration());
    annotations.put(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION, "25%");
    annotations.put(ClusterApi.LIVE_MIGRATION_ANNOTATION, "Prefer");
    assertEquals(EvacuationLimit.parse("25%").orElseThrow(), apply(T1).evacuationLimit());
    assertEquals(LiveMigrationPolicy.PREFER, apply(T1).liveMigration());
    assertEquals(List.of(), told);
  }

  @Test
  void anInvalidValueIsTheFlagToldOncePerEvacuationAndValue() throws Exception {
    annotations.put(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION, "many");
    assertEquals(flag, apply(T1).evacuationLimit());
    assertEquals(flag, apply(T1).evacuationLimit());
    assertEquals(List.of("EvacuationLimitInvalid"), reasons());
    assertEquals(
        "EvacuationLimitInvalid: Cluster annotation "
            + ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION
            + " value \"many\" is not a count or a percentage (e.g. 2 or 25%): using"
            + " --max-concurrent-evacuations-per-cluster 3",
        told.get(0));

    annotations.put(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION, "lots"); // another value
    apply(T1);
    annotations.put(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION, "many");
    apply(T2); // another evacuation
    assertEquals(
        List.of("EvacuationLimitInvalid", "EvacuationLimitInvalid", "EvacuationLimitInvalid"),
        reasons());
  }

  @Test
  void theSameInvalidValueInTwoAnnotationsIsToldForEach() throws Exception {
    annotations.put(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION, "many");
    annotations.put(ClusterApi.LIVE_MIGRATION_ANNOTATION, "many");
    assertEquals(LiveMigrationPolicy.NEVER, apply(T1).liveMigration());
    assertEquals(List.of("EvacuationLimitInvalid", "LiveMigrationPolicyInvalid"), reasons());
    assertEquals(
        "LiveMigrationPolicyInvalid: Cluster annotation "
            + ClusterApi.LIVE_MIGRATION_ANNOTATION
            + " value \"many\" is neither never nor prefer; using --live-migration=never",
        told.get(1));
  }

  @Test
  void aLongValueIsShownCut() throws Exception {
    annotations.put(ClusterApi.MAX_CONCURRENT_EVACUATIONS_ANNOTATION, "x".repeat(100));
    apply(T1);
    assertEquals(1, told.size());
    assertEquals(true, told.get(0).contains("\"" + "x".repeat(64) + "...\""));
  }
}
