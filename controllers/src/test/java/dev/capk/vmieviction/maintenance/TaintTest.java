package dev.capk.vmieviction.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.models.V1Taint;
import java.util.List;
import org.junit.jupiter.api.Test;

class TaintTest {

  @Test
  void parsesKeyValueAndEffectAsKubectlWritesThem() {
    assertEquals(
        new Taint("medik8s.io/drain", null, "NoSchedule"),
        Taint.parse("medik8s.io/drain:NoSchedule"));
    assertEquals(
        new Taint("dedicated", "infra", "NoExecute"), Taint.parse(" dedicated=infra:NoExecute "));
    assertEquals("dedicated=infra:NoExecute", Taint.parse("dedicated=infra:NoExecute").toString());
    assertEquals(new Taint("k", null, "PreferNoSchedule"), Taint.parse("k=:PreferNoSchedule"));
  }

  @Test
  void refusesMalformedTaintsNamingTheProblem() {
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> Taint.parse("medik8s.io/drain"))
            .getMessage()
            .contains("key[=value]:Effect"));
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> Taint.parse("a:NoWay"))
            .getMessage()
            .contains("NoWay"));
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> Taint.parse("bad key:NoSchedule"))
            .getMessage()
            .contains("bad key"));
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> Taint.parse("k=has space:NoSchedule"))
            .getMessage()
            .contains("value"));
    assertThrows(IllegalArgumentException.class, () -> Taint.parse(""));
    assertThrows(IllegalArgumentException.class, () -> Taint.parse(":NoSchedule"));
    // A key's prefix is a lower-case DNS subdomain, and only one slash is allowed.
    assertEquals("example.com/a_B.c", Taint.parse("example.com/a_B.c:NoSchedule").key());
    assertThrows(IllegalArgumentException.class, () -> Taint.parse("Example.com/a:NoSchedule"));
    assertThrows(IllegalArgumentException.class, () -> Taint.parse("a/b/c:NoSchedule"));
    assertThrows(IllegalArgumentException.class, () -> Taint.parse("/a:NoSchedule"));
  }

  @Test
  void sameTaintMeansSameKeyAndEffectWhateverTheValue() {
    Taint t = Taint.parse("dedicated=a:NoSchedule");
    assertTrue(t.sameAs(new V1Taint().key("dedicated").value("b").effect("NoSchedule")));
    assertFalse(t.sameAs(new V1Taint().key("dedicated").effect("NoExecute")));
    assertFalse(t.sameAs((V1Taint) null));
  }

  @Test
  void aBadDrainTaintFlagIsReportedWithTheFlagName() {
    assertEquals(
        java.util.Optional.empty(),
        NodeMaintenanceSettings.taintProblem("--f", "medik8s.io/drain:NoSchedule"));
    assertEquals(
        java.util.Optional.of(
            "--f: taint effect must be NoSchedule, PreferNoSchedule or NoExecute, got"
                + " \"Never\" in \"a:Never\""),
        NodeMaintenanceSettings.taintProblem("--f", "a:Never"));
  }

  @Test
  void maintenanceTaintsAreUnschedulableThenTheDrainTaintThenKubeVirtsWhenAsked() {
    assertEquals(
        List.of(Taint.UNSCHEDULABLE, Taint.MEDIK8S_DRAIN),
        NodeMaintenanceSettings.taints("medik8s.io/drain:NoSchedule", false));
    assertEquals(
        List.of(
            Taint.UNSCHEDULABLE,
            Taint.parse("example.com/maint=yes:NoExecute"),
            Taint.KUBEVIRT_DRAIN),
        NodeMaintenanceSettings.taints("example.com/maint=yes:NoExecute", true));
    // No duplicates when the drain taint is one of the others.
    assertEquals(
        List.of(Taint.UNSCHEDULABLE, Taint.KUBEVIRT_DRAIN),
        NodeMaintenanceSettings.taints("kubevirt.io/drain:NoSchedule", true));
    assertEquals(
        List.of(Taint.UNSCHEDULABLE),
        NodeMaintenanceSettings.taints("node.kubernetes.io/unschedulable:NoSchedule", false));
  }
}
