package dev.capk.vmieviction.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.api.EvacuationPhase;
import dev.capk.vmieviction.status.EvacuationStatuses.DeadlineEstimate;
import dev.capk.vmieviction.status.EvacuationStatuses.EvacuationStatus;
import dev.capk.vmieviction.status.EvacuationStatuses.VmiEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The table, wide table and JSON of the status command. */
class StatusTableTest {

  static final Instant NOW = Instant.parse("2026-01-01T10:05:00Z");

  static EvacuationStatus draining() {
    return new EvacuationStatus(
        "t",
        "vm-a",
        "uid-a",
        "guest",
        "worker",
        Optional.of("vm-a"),
        "infra-1",
        EvacuationPhase.Draining,
        Optional.of(Instant.parse("2026-01-01T10:00:00Z")),
        Optional.of(
            new DeadlineEstimate(Instant.parse("2026-01-01T10:10:00Z"), "--drain-timeout 10m0s")),
        Optional.of(Duration.ofSeconds(299)),
        Optional.of(
            new VmiEvent(
                "uid-a",
                "DrainBlocked",
                EvacuationStatusesTest.BLOCKED,
                Instant.parse("2026-01-01T10:02:00Z"))));
  }

  static EvacuationStatus pending() {
    return new EvacuationStatus(
        "tenant-long-name",
        "vm-b",
        "uid-b",
        "",
        "",
        Optional.empty(),
        "infra-2",
        EvacuationPhase.Pending,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }

  @Test
  void tableAlignsColumnsAndCutsTheDeadlineClause() {
    assertEquals(
        List.of(
            "NAMESPACE          VMI    CLUSTER   GUEST-NODE   INFRA-NODE   PHASE      TIME-LEFT  "
                + " BLOCKED-BY",
            "t                  vm-a   guest     vm-a         infra-1      Draining   4m59s      "
                + " Guest node vm-a not drained yet (1 pod(s) left): PodDisruptionBudgets"
                + " app/db-pdb (pod app/db-0)",
            "tenant-long-name   vm-b   <none>    <none>       infra-2      Pending    <unknown>  "
                + " <none>"),
        StatusOutput.lines(List.of(draining(), pending()), false));
  }

  @Test
  void wideAddsRoleTimesDeadlineSourceAndTheWholeMessage() {
    List<String> lines = StatusOutput.lines(List.of(draining()), true);
    assertEquals(
        List.of(
            "NAMESPACE",
            "VMI",
            "CLUSTER",
            "ROLE",
            "GUEST-NODE",
            "INFRA-NODE",
            "PHASE",
            "STARTED",
            "DEADLINE",
            "DEADLINE-FROM",
            "TIME-LEFT",
            "REASON",
            "BLOCKED-BY"),
        List.of(lines.get(0).split("\\s{2,}")));
    assertTrue(
        lines
            .get(1)
            .matches(
                "t +vm-a +guest +worker +vm-a +infra-1 +Draining +2026-01-01T10:00:00Z"
                    + " +2026-01-01T10:10:00Z +--drain-timeout 10m0s +4m59s +DrainBlocked +Guest"
                    + " node vm-a .*; VMI deleted anyway at 2026-01-01T10:10:00Z"),
        lines.get(1));
  }

  @ParameterizedTest
  @CsvSource({
    "0,0s",
    "45,45s",
    "119,119s",
    "120,2m",
    "552,9m12s",
    "3600,1h",
    "7500,2h5m",
    "-12,-12s"
  })
  void timeLeftReadsLikeKubectlAges(long seconds, String shown) {
    assertEquals(shown, StatusOutput.timeLeft(Optional.of(Duration.ofSeconds(seconds))));
  }

  @Test
  void jsonHasEveryFieldAndLeavesAbsentOnesOut() {
    JsonObject root =
        JsonParser.parseString(
                StatusOutput.json(List.of(draining(), pending()), NOW, Duration.ofMinutes(10)))
            .getAsJsonObject();
    assertEquals("10m0s", root.get("drainTimeout").getAsString());
    JsonObject a = root.getAsJsonArray("evacuations").get(0).getAsJsonObject();
    assertEquals("Draining", a.get("phase").getAsString());
    assertEquals("vm-a", a.get("guestNode").getAsString());
    assertEquals("infra-1", a.get("infraNode").getAsString());
    assertEquals("2026-01-01T10:10:00Z", a.get("deadline").getAsString());
    assertEquals(299, a.get("secondsLeft").getAsLong());
    assertEquals("DrainBlocked", a.getAsJsonObject("blockedBy").get("reason").getAsString());
    assertEquals(
        EvacuationStatusesTest.BLOCKED,
        a.getAsJsonObject("blockedBy").get("message").getAsString());
    JsonObject b = root.getAsJsonArray("evacuations").get(1).getAsJsonObject();
    assertEquals("Pending", b.get("phase").getAsString());
    assertTrue(!b.has("secondsLeft") && !b.has("cluster") && !b.has("blockedBy"), b.toString());
  }
}
