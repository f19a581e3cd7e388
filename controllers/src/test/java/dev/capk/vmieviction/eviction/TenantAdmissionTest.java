package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.eviction.EvictionSettings.EvacuationLimit;
import dev.capk.vmieviction.eviction.Guest.GuestNodeMatch.NodeReadiness;
import dev.capk.vmieviction.eviction.Guest.MarkedNodes;
import dev.capk.vmieviction.eviction.TenantAdmission.Decision;
import dev.capk.vmieviction.eviction.TenantAdmission.Peer;
import dev.capk.vmieviction.eviction.TenantAdmission.Request;
import dev.capk.vmieviction.eviction.TenantAdmission.Role;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The admit step as a table: this VMI, its Cluster's other VMIs and control-plane nodes, the limit
 * and the clock in; Admit, Hold (with what it waits for) or Override out.
 */
class TenantAdmissionTest {

  static final Instant START = Instant.parse("2025-03-01T12:00:00Z");
  static final Duration TIMEOUT = Duration.ofMinutes(10);
  static final Duration RESERVE = Duration.ofMinutes(3);
  static final Instant DEADLINE = START.plus(TIMEOUT);
  static final Instant EARLY = START.plusSeconds(30);

  /** A peer marked {@code offset} seconds after this VMI's start (null: no start recorded yet). */
  static Peer peer(String name, Role role, boolean marked, Integer offset, boolean admitted) {
    return new Peer(
        name,
        role,
        marked,
        offset == null ? Optional.empty() : Optional.of(START.plusSeconds(offset)),
        admitted);
  }

  static Peer cp(String name, Integer offset, boolean admitted) {
    return peer(name, Role.CONTROL_PLANE, true, offset, admitted);
  }

  static Peer worker(String name, Integer offset, boolean admitted) {
    return peer(name, Role.WORKER, true, offset, admitted);
  }

  /** A control-plane guest node; {@code cordoned}: still marked by our cordon. */
  static MarkedNodes.Node node(String name, NodeReadiness readiness, boolean cordoned) {
    return new MarkedNodes.Node(name, null, true, readiness, cordoned);
  }

  static final MarkedNodes.Node CP2_READY = node("cp-2", NodeReadiness.READY, false);
  static final MarkedNodes.Node CP3_READY = node("cp-3", NodeReadiness.READY, false);

  static Request cpRequest(List<Peer> peers, List<MarkedNodes.Node> nodes, Instant now) {
    return new Request(
        "cp-1",
        Role.CONTROL_PLANE,
        START,
        peers,
        nodes,
        EvacuationLimit.UNLIMITED,
        now,
        DEADLINE,
        RESERVE);
  }

  static Request workerRequest(List<Peer> peers, String limit, Instant now) {
    return new Request(
        "w-1",
        Role.WORKER,
        START,
        peers,
        List.of(),
        EvacuationLimit.parse(limit).orElseThrow(),
        now,
        DEADLINE,
        RESERVE);
  }

  static Stream<Arguments> table() {
    return Stream.of(
        // Control plane: one at a time, the others Ready.
        Arguments.of(
            "control plane, no other member being evacuated, all Ready: admitted",
            cpRequest(
                List.of(peer("cp-2", Role.CONTROL_PLANE, false, null, false)),
                List.of(CP2_READY, CP3_READY),
                EARLY),
            "Admit",
            ""),
        Arguments.of(
            "control plane, another admitted and not gone: held",
            cpRequest(List.of(cp("cp-2", -10, true)), List.of(CP2_READY, CP3_READY), EARLY),
            "Hold",
            "control-plane VMI cp-2 still being evacuated"),
        Arguments.of(
            "control plane, another member's guest node NotReady: held",
            cpRequest(
                List.of(), List.of(node("cp-2", NodeReadiness.NOT_READY, false), CP3_READY), EARLY),
            "Hold",
            "control-plane guest node cp-2 not Ready"),
        Arguments.of(
            "control plane, another member's guest node unreachable: held",
            cpRequest(List.of(), List.of(node("cp-3", NodeReadiness.UNREACHABLE, false)), EARLY),
            "Hold",
            "control-plane guest node cp-3 not Ready"),
        Arguments.of(
            "control plane, previous member recreated and Ready but still cordoned by us: held",
            cpRequest(List.of(), List.of(node("cp-2", NodeReadiness.READY, true)), EARLY),
            "Hold",
            "cp-2 not back from its evacuation yet"),
        Arguments.of(
            "control plane, another marked earlier and waiting: it goes first",
            cpRequest(List.of(cp("cp-2", -5, false)), List.of(CP2_READY), EARLY),
            "Hold",
            "control-plane VMI cp-2 first (marked earlier)"),
        Arguments.of(
            "control plane, same start: the name decides (cp-0 before cp-1)",
            cpRequest(List.of(cp("cp-0", 0, false)), List.of(), EARLY),
            "Hold",
            "cp-0 first"),
        Arguments.of(
            "control plane, same start: the name decides (cp-1 before cp-2)",
            cpRequest(List.of(cp("cp-2", 0, false)), List.of(CP2_READY), EARLY),
            "Admit",
            ""),
        Arguments.of(
            "control plane, a member marked later (or not started yet) waits behind this one",
            cpRequest(List.of(cp("cp-2", 5, false), cp("cp-3", null, false)), List.of(), EARLY),
            "Admit",
            ""),
        Arguments.of(
            "control plane, an admitted worker does not hold a control-plane VMI",
            cpRequest(List.of(worker("w-1", -5, true)), List.of(), EARLY),
            "Admit",
            ""),
        Arguments.of(
            "control plane, an unlabelled guest node running a control-plane peer NotReady: held",
            cpRequest(
                List.of(peer("cp-2", Role.CONTROL_PLANE, false, null, false)),
                List.of(new MarkedNodes.Node("cp-2", null, false, NodeReadiness.NOT_READY, false)),
                EARLY),
            "Hold",
            "control-plane guest node cp-2 not Ready"),
        Arguments.of(
            "control plane, its own guest node and a worker's node do not hold it",
            cpRequest(
                List.of(),
                List.of(
                    node("cp-1", NodeReadiness.NOT_READY, true),
                    new MarkedNodes.Node("w-1", null, false, NodeReadiness.NOT_READY, true)),
                EARLY),
            "Admit",
            ""),
        Arguments.of(
            "control plane held at deadline minus reserve: overridden",
            cpRequest(List.of(cp("cp-2", -10, true)), List.of(), DEADLINE.minus(RESERVE)),
            "Override",
            "cp-2 still being evacuated"),
        Arguments.of(
            "control plane held one second before deadline minus reserve: still held",
            cpRequest(
                List.of(cp("cp-2", -10, true)), List.of(), DEADLINE.minus(RESERVE).minusSeconds(1)),
            "Hold",
            "cp-2"),
        // Workers: the limit.
        Arguments.of(
            "worker, unlimited: admitted whatever else is under way",
            workerRequest(List.of(worker("w-2", -5, true), worker("w-3", -5, true)), "0", EARLY),
            "Admit",
            ""),
        Arguments.of(
            "worker, limit 2, one admitted: admitted",
            workerRequest(List.of(worker("w-2", -5, true)), "2", EARLY),
            "Admit",
            ""),
        Arguments.of(
            "worker, limit 2, two admitted: held",
            workerRequest(List.of(worker("w-2", -5, true), worker("w-3", -5, true)), "2", EARLY),
            "Hold",
            "2 worker VMI(s) of the Cluster being evacuated (w-2, w-3), limit 2"),
        Arguments.of(
            "worker, limit 2, one admitted and one waiting marked earlier: that one first",
            workerRequest(List.of(worker("w-2", -5, true), worker("w-0", -1, false)), "2", EARLY),
            "Hold",
            "worker VMI w-0 first (marked earlier)"),
        Arguments.of(
            "worker, limit 2, one admitted and one waiting marked later: admitted",
            workerRequest(List.of(worker("w-2", -5, true), worker("w-0", 1, false)), "2", EARLY),
            "Admit",
            ""),
        Arguments.of(
            "worker, limit counts only workers: an admitted control-plane VMI takes no slot",
            workerRequest(List.of(cp("cp-1", -5, true)), "1", EARLY),
            "Admit",
            ""),
        Arguments.of(
            "worker, unmarked and unadmitted peers take no slot",
            workerRequest(List.of(peer("w-2", Role.WORKER, false, null, false)), "1", EARLY),
            "Admit",
            ""),
        Arguments.of(
            "worker, 25% of 8 VMIs is 2: two admitted, held",
            workerRequest(
                List.of(
                    worker("w-2", -5, true),
                    worker("w-3", -5, true),
                    peer("w-4", Role.WORKER, false, null, false),
                    peer("w-5", Role.WORKER, false, null, false),
                    peer("w-6", Role.WORKER, false, null, false),
                    peer("w-7", Role.WORKER, false, null, false),
                    peer("w-8", Role.WORKER, false, null, false)),
                "25%",
                EARLY),
            "Hold",
            "limit 2 (25% of 8)"),
        Arguments.of(
            "worker, 10% of 3 VMIs is at least 1: none admitted, admitted",
            workerRequest(
                List.of(
                    peer("w-2", Role.WORKER, false, null, false),
                    peer("w-3", Role.WORKER, false, null, false)),
                "10%",
                EARLY),
            "Admit",
            ""),
        Arguments.of(
            "worker, 10% of 3 VMIs is at least 1: one admitted, held",
            workerRequest(
                List.of(worker("w-2", -5, true), peer("w-3", Role.WORKER, false, null, false)),
                "10%",
                EARLY),
            "Hold",
            "limit 1 (10% of 3)"),
        Arguments.of(
            "worker held past deadline minus reserve: overridden",
            workerRequest(List.of(worker("w-2", -5, true)), "1", DEADLINE.minusSeconds(1)),
            "Override",
            "limit 1"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void decides(String name, Request request, String expected, String says) {
    Decision d = TenantAdmission.decide(request);
    String kind = d.admit() ? "Admit" : d.override() ? "Override" : "Hold";
    assertEquals(expected, kind, name + ": " + d);
    String text = d.waitsFor();
    assertTrue(text.contains(says), name + ": \"" + text + "\" should say \"" + says + "\"");
  }

  @Test
  void aHeldVmiGoesAheadAtDeadlineMinusReserveWhichNeverMoves() {
    Decision d =
        TenantAdmission.decide(cpRequest(List.of(cp("cp-2", -10, true)), List.of(), EARLY));
    assertEquals(
        new Decision(
            "control-plane VMI cp-2 still being evacuated", DEADLINE.minus(RESERVE), false),
        d);
  }

  @Test
  void aReserveAsLongAsTheTimeoutOverridesAtOnce() {
    Request r =
        new Request(
            "cp-1",
            Role.CONTROL_PLANE,
            START,
            List.of(cp("cp-2", -10, true)),
            List.of(),
            EvacuationLimit.UNLIMITED,
            START,
            DEADLINE,
            TIMEOUT);
    assertTrue(TenantAdmission.decide(r).override());
  }

  @Test
  void admitIsAdmit() {
    assertTrue(TenantAdmission.decide(cpRequest(List.of(), List.of(CP2_READY), EARLY)).admit());
  }

  static Stream<Arguments> limits() {
    return Stream.of(
        Arguments.of("0", 0, false, 5, Integer.MAX_VALUE),
        Arguments.of("2", 2, false, 6, 2),
        Arguments.of(" 3 ", 3, false, 1, 3),
        Arguments.of("25%", 25, true, 6, 1),
        Arguments.of("50%", 50, true, 6, 3),
        Arguments.of("100%", 100, true, 6, 6),
        Arguments.of("1%", 1, true, 6, 1));
  }

  @ParameterizedTest(name = "limit \"{0}\"")
  @MethodSource("limits")
  void parsesLimits(String raw, int value, boolean percent, int vmis, int allowed) {
    EvacuationLimit l = EvacuationLimit.parse(raw).orElseThrow();
    assertEquals(new EvacuationLimit(value, percent), l);
    assertEquals(allowed, l.resolve(vmis));
  }

  @ParameterizedTest(name = "not a limit: \"{0}\"")
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"", " ", "-1", "two", "0%", "101%", "2.5", "%", "1e3", "9999999999", "25 %"})
  void rejectsMalformedLimits(String raw) {
    assertTrue(EvacuationLimit.parse(raw).isEmpty(), raw);
  }
}
