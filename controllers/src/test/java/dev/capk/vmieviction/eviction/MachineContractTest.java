package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.Machine;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import dev.capk.vmieviction.eviction.MachineContractCheck.MachineContract;
import dev.capk.vmieviction.eviction.MachineContractCheck.MachineContract.Facts;
import dev.capk.vmieviction.eviction.MachineContractCheck.MachineContract.Step;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Cluster API's contract for a machine, as a table: facts in, step and deadline out. */
class MachineContractTest {

  static final Instant START = Instant.parse("2025-03-01T12:00:00Z");
  static final Duration TIMEOUT = Duration.ofMinutes(10);

  static Facts facts(
      Boolean paused, Boolean excluded, String v1beta1Timeout, Long v1beta2Seconds, String grace) {
    return new Facts(
        "ns/c",
        Optional.ofNullable(paused).map(p -> cluster("ns", "c", p)),
        Optional.of(kubevirtMachine("ns", "kvm", grace)),
        Optional.ofNullable(excluded)
            .map(e -> machine("ns", "m", e, v1beta1Timeout, v1beta2Seconds)),
        paused == null || excluded == null ? List.of("something not found") : List.of());
  }

  static V1ObjectMeta meta(String ns, String name, String annotation, String value) {
    V1ObjectMeta meta = new V1ObjectMeta().namespace(ns).name(name);
    return value == null ? meta : meta.annotations(Map.of(annotation, value));
  }

  static Cluster cluster(String ns, String name, boolean paused) {
    Cluster c = new Cluster().metadata(meta(ns, name, null, null));
    c.setSpec(new Cluster.Spec());
    c.getSpec().setPaused(paused);
    return c;
  }

  static KubevirtMachine kubevirtMachine(String ns, String name, String grace) {
    return new KubevirtMachine()
        .metadata(meta(ns, name, EvictionAnnotations.CAPK_DELETION_GRACE_TIME, grace));
  }

  /** A Machine with v1beta1's and v1beta2's drain timeouts, each when not null. */
  static Machine machine(
      String ns, String name, boolean excluded, String v1beta1Timeout, Long v1beta2Seconds) {
    String exclude = ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION;
    Machine m = new Machine().metadata(meta(ns, name, exclude, excluded ? "" : null));
    m.setSpec(new Machine.Spec());
    m.getSpec().setNodeDrainTimeout(v1beta1Timeout);
    if (v1beta2Seconds != null) {
      m.getSpec().setDeletion(new Machine.Deletion());
      m.getSpec().getDeletion().setNodeDrainTimeoutSeconds(v1beta2Seconds);
    }
    return m;
  }

  static Stream<Arguments> table() {
    return Stream.of(
        // name, facts, step, deadline (null: the global one), origin contains
        Arguments.of(
            "nothing set: drain, global deadline",
            facts(false, false, null, null, null),
            Step.DRAIN,
            null,
            ""),
        Arguments.of(
            "paused Cluster: hold",
            facts(true, false, null, null, null),
            Step.HOLD_PAUSED,
            null,
            ""),
        Arguments.of(
            "paused wins over excluded",
            facts(true, true, null, null, null),
            Step.HOLD_PAUSED,
            null,
            ""),
        Arguments.of(
            "excluded Machine: skip the drain",
            facts(false, true, null, null, null),
            Step.SKIP_DRAIN,
            null,
            ""),
        Arguments.of(
            "v1beta1 nodeDrainTimeout shorter: start + it",
            facts(false, false, "5m", null, null),
            Step.DRAIN,
            "2025-03-01T12:05:00Z",
            "Machine ns/m node drain timeout 5m0s"),
        Arguments.of(
            "v1beta1 nodeDrainTimeout longer: never later than the global timeout",
            facts(false, false, "1h", null, null),
            Step.DRAIN,
            null,
            ""),
        Arguments.of(
            "nodeDrainTimeout 0s means no limit: the global timeout",
            facts(false, false, "0s", null, null),
            Step.DRAIN,
            null,
            ""),
        Arguments.of(
            "v1beta2 nodeDrainTimeoutSeconds shorter",
            facts(false, false, null, 90L, null),
            Step.DRAIN,
            "2025-03-01T12:01:30Z",
            "1m30s"),
        Arguments.of(
            "v1beta2 0 means no limit", facts(false, false, null, 0L, null), Step.DRAIN, null, ""),
        Arguments.of(
            "grace time on the KubevirtMachine earlier",
            facts(false, false, null, null, "2025-03-01T12:03:00Z"),
            Step.DRAIN,
            "2025-03-01T12:03:00Z",
            "KubevirtMachine ns/kvm"),
        Arguments.of(
            "grace time later than the global deadline: ignored",
            facts(false, false, null, null, "9999-12-31T23:59:59Z"),
            Step.DRAIN,
            null,
            ""),
        Arguments.of(
            "the earlier of timeout and grace wins (grace)",
            facts(false, false, "5m", null, "2025-03-01T12:02:00Z"),
            Step.DRAIN,
            "2025-03-01T12:02:00Z",
            "KubevirtMachine"),
        Arguments.of(
            "the earlier of timeout and grace wins (timeout)",
            facts(false, false, "1m", null, "2025-03-01T12:02:00Z"),
            Step.DRAIN,
            "2025-03-01T12:01:00Z",
            "Machine ns/m"),
        Arguments.of(
            "Machine unknown: today's behaviour",
            facts(false, null, null, null, null),
            Step.DRAIN,
            null,
            ""),
        Arguments.of(
            "Cluster unknown: not paused",
            facts(null, true, null, null, null),
            Step.SKIP_DRAIN,
            null,
            ""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void decides(String name, Facts facts, Step step, String deadline, String origin) {
    MachineContract c = MachineContract.decide(facts, START, TIMEOUT);
    assertEquals(step, c.step());
    assertEquals(Optional.ofNullable(deadline).map(Instant::parse), c.deadline());
    assertTrue(c.deadlineOrigin().contains(origin), c.deadlineOrigin());
    assertEquals(facts.unavailable(), c.unavailable());
  }

  static Stream<Arguments> unusable() {
    return Stream.of(
        Arguments.of(facts(false, false, "soon", null, null), "spec.nodeDrainTimeout \"soon\""),
        Arguments.of(facts(false, false, null, -5L, null), "nodeDrainTimeoutSeconds -5"),
        Arguments.of(facts(false, false, null, null, "tomorrow"), "\"tomorrow\""));
  }

  @ParameterizedTest
  @MethodSource("unusable")
  void anUnusableValueIsIgnoredAndNamed(Facts facts, String named) {
    MachineContract c = MachineContract.decide(facts, START, TIMEOUT);
    assertEquals(Step.DRAIN, c.step());
    assertEquals(Optional.empty(), c.deadline(), "the global deadline");
    assertEquals(1, c.unavailable().size());
    assertTrue(c.unavailable().get(0).contains(named), c.unavailable().get(0));
  }
}
