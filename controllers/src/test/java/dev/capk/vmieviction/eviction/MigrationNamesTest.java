package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.eviction.MigrationDecision.MigrationAttempt;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A migration's name is the same for the same attempt of the same evacuation (so a restart finds
 * it, and a second create answers AlreadyExists), differs otherwise, and fits in 63 characters; the
 * attempt recorded on a VMI belongs to one drain start only.
 */
class MigrationNamesTest {

  static VirtualMachineInstance vmi(String name, String uid) {
    return new VirtualMachineInstance().metadata(new V1ObjectMeta().name(name).uid(uid));
  }

  static final String START = "2025-03-01T12:00:00Z";

  @Test
  void sameAttemptSameNameOtherwiseAnother() {
    VirtualMachineInstance v = vmi("worker-0", "uid-1");
    assertEquals(
        LiveMigrationStep.name(v, START, 1),
        LiveMigrationStep.name(vmi("worker-0", "uid-1"), START, 1));
    assertNotEquals(LiveMigrationStep.name(v, START, 1), LiveMigrationStep.name(v, START, 2));
    assertNotEquals(
        LiveMigrationStep.name(v, START, 1),
        LiveMigrationStep.name(v, "2025-03-01T13:00:00Z", 1),
        "a later evacuation gets its own migrations");
    assertNotEquals(
        LiveMigrationStep.name(v, START, 1),
        LiveMigrationStep.name(vmi("worker-0", "uid-2"), START, 1),
        "a recreated VMI gets its own migrations");
  }

  @Test
  void aLongVmiNameIsCutToA63CharacterName() {
    String longName = "a".repeat(60) + "-" + "b".repeat(100);
    String name = LiveMigrationStep.name(vmi(longName, "uid"), START, 2);
    assertTrue(name.length() <= 63, name);
    assertTrue(name.endsWith("-2"), name);
    assertTrue(name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"), name);
  }

  @Test
  void anAttemptBelongsToItsDrainStartOnly() {
    Instant began = Instant.parse("2025-03-01T12:00:05Z");
    String raw = MigrationAttempt.format(START, 2, began);
    assertEquals(Optional.of(new MigrationAttempt(START, 2, began)), MigrationAttempt.parse(raw));
    assertEquals(Optional.empty(), MigrationAttempt.parse("garbage"));
    assertEquals(Optional.empty(), MigrationAttempt.parse(null));
  }
}
