package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.InfraVmis.OwnWrites;
import org.junit.jupiter.api.Test;

class OwnWritesTest {

  private final OwnWrites writes = new OwnWrites();

  private static VirtualMachineInstance at(String resourceVersion) {
    return version(TestVmis.vmi("vm-1", "External", "infra-1"), resourceVersion);
  }

  private static VirtualMachineInstance version(VirtualMachineInstance vmi, String rv) {
    vmi.getMetadata().setResourceVersion(rv);
    return vmi;
  }

  private static VirtualMachineInstance annotated(String rv, String key, String value) {
    VirtualMachineInstance v = at(rv);
    v.getMetadata().getAnnotations().put(key, value);
    return v;
  }

  @Test
  void aCacheStillAtTheVersionOurWriteReplacedServesTheWritesResult() {
    writes.wrote(at("10"), annotated("11", "start", "t0"));

    VirtualMachineInstance read = writes.freshest(at("10"));

    assertEquals("11", read.getMetadata().getResourceVersion());
    assertEquals("t0", read.getMetadata().getAnnotations().get("start"));
  }

  @Test
  void aCacheBehindTwoOfOurWritesServesTheLatest() {
    writes.wrote(at("10"), annotated("11", "start", "t0"));
    VirtualMachineInstance second = annotated("12", "start", "t0");
    second.getMetadata().getAnnotations().put("admitted", "t0");
    writes.wrote(annotated("11", "start", "t0"), second);

    assertEquals("12", writes.freshest(at("10")).getMetadata().getResourceVersion());
    assertEquals("t0", writes.freshest(at("11")).getMetadata().getAnnotations().get("admitted"));
  }

  @Test
  void aCacheThatCaughtUpIsServedAndTheWriteForgotten() {
    writes.wrote(at("10"), annotated("11", "start", "t0"));

    VirtualMachineInstance cached = annotated("11", "start", "t0");
    assertSame(cached, writes.freshest(cached));
    assertEquals(0, writes.size());
    // Forgotten: a later read of the old version is the cache's again (the server moved on).
    VirtualMachineInstance old = at("10");
    assertSame(old, writes.freshest(old));
  }

  @Test
  void aVersionSomebodyElseWroteIsTheCaches() {
    writes.wrote(at("10"), annotated("11", "start", "t0"));

    VirtualMachineInstance theirs = at("14"); // e.g. KubeVirt wrote the status, or the annotation
    // was removed by hand: the cache's view counts, and tampering is judged on it
    assertSame(theirs, writes.freshest(theirs));
  }

  @Test
  void aNewVmiOfTheSameNameIsNeverServedTheOldOnesWrite() {
    writes.wrote(at("10"), annotated("11", "start", "t0"));

    VirtualMachineInstance recreated = at("10");
    recreated.getMetadata().setUid("uid-new");
    assertSame(recreated, writes.freshest(recreated));
  }

  @Test
  void aVmiGoneFromTheCacheIsForgotten() {
    writes.wrote(at("10"), annotated("11", "start", "t0"));

    writes.forget("tenant-a", "vm-1");

    assertEquals(0, writes.size());
  }
}
