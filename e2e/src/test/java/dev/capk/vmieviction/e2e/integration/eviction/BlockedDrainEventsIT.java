package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.events;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.capk.vmieviction.e2e.harness.Await;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * A guest drain that stays blocked for minutes with a different blocking message at each pass, then
 * succeeds: the events of the VMI and of its guest node stay a few series, and every outcome event
 * is written. (client-java's legacy recorder spent its 25 events per object on the blocked passes,
 * dropped the outcomes, and logged 409s as errors.)
 */
class BlockedDrainEventsIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  static final String NS = "ev-events";
  static final String TENANT = "tenant-events";
  static final String INFRA_NODE = "infra-node-3";

  /** Pods, each behind its own budget: one distinct blocking message per budget lifted. */
  static final int BLOCKED_PODS = 61;

  static final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeAll
  static void start() throws Exception {
    world.tenant(NS, TENANT, world.guest());
    // The deadline stays far away: the drain ends because the budgets are lifted.
    world.startController(
        NS, flags("--drain-timeout 20m --drain-retry-interval 1s --drain-attempt-timeout 1s"));
    // From here on: the scenario. (Before, the informer's first list of a CRD installed a moment
    // ago
    // may meet "storage is (re)initializing", which client-java logs as an ERROR and retries.)
    log.start();
    root().addAppender(log);
  }

  @AfterAll
  static void stop() {
    root().detachAppender(log);
  }

  static Logger root() {
    return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  static List<ILoggingEvent> logged() {
    synchronized (log) { // the appender appends under this lock
      return new ArrayList<>(log.list);
    }
  }

  @Test
  void manyDistinctBlockingMessagesStillLeaveEveryOutcomeEvent() throws Exception {
    String vm = unique("vm-blocked");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String guestNs = unique("budgets");
    blockedPods(guestNs, vm);

    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, INFRA_NODE);

    // Lift one budget at a time, each once a drain step has seen the one before lifted: every step
    // in between is blocked with a message of its own (pods left, budgets named). In name order: a
    // step tries the first pods first (32 at a time), and a refused pod holds its slot.
    PolicyV1Api policy = new PolicyV1Api(world.guest().client());
    for (int i = 0; i < BLOCKED_PODS; i++) {
      int left = BLOCKED_PODS - i;
      Await.until(
          "a drain step blocked with " + left + " pod(s) left", WAIT, () -> blockedPass(vm, left));
      if (left == 1) {
        // A lifted budget wakes the drain at once, so the passes above go quickly; the last one
        // stays blocked, retried every second, until its series has counted repeats (a series is
        // written again at most once a minute).
        Await.until(
            "the DrainBlocked series counts repeats while the last pod is blocked",
            WAIT,
            () ->
                EvictionFixture.event(world.infra(), NS, vm, "DrainBlocked")
                    .map(e -> e.getCount() != null && e.getCount() > 1)
                    .orElse(false));
      }
      policy.deleteNamespacedPodDisruptionBudget(String.format("pdb-%02d", i), guestNs).execute();
    }
    awaitDeleted(world.infra(), NS, vm, uid);
    Set<String> distinctBlockers = blockedPassMessages(vm);
    assertTrue(
        distinctBlockers.size() >= 60,
        "the scenario: 60+ distinct blocking messages, got " + distinctBlockers.size());
    // The last pod was blocked for over a minute, a pass every second: its wait is logged at INFO
    // once per change (the pod before it still terminating, then not, then its own termination),
    // not at every pass.
    long lastPodLines =
        logged().stream()
            .map(e -> BLOCKED_PASS.matcher(e.getFormattedMessage()))
            .filter(m -> m.find() && m.group(1).equals(NS + "/" + vm) && m.group(2).equals("1"))
            .count();
    assertTrue(
        lastPodLines >= 1 && lastPodLines <= 3,
        "the last pod's wait logged once per change, not per pass: " + lastPodLines);

    // Every outcome is on the VMI...
    assertTrue(
        awaitEvent(world.infra(), NS, vm, "DrainSucceeded")
            .getMessage()
            .contains("; VMI deleted so that"),
        "the drain and the deletion, in one event");
    List<CoreV1Event> vmiEvents = events(world.infra(), NS, vm);
    String reasons =
        vmiEvents.stream().map(e -> e.getReason() + "x" + e.getCount()).toList().toString();
    // ... among a few series: one per reason, not one per blocked pass.
    assertTrue(
        vmiEvents.size() <= 8, "Event objects of the VMI bounded (one per reason): " + reasons);
    List<CoreV1Event> blocked =
        vmiEvents.stream().filter(e -> "DrainBlocked".equals(e.getReason())).toList();
    assertEquals(1, blocked.size(), "one DrainBlocked series: " + reasons);
    assertTrue(
        blocked.get(0).getCount() > 1, "the DrainBlocked series counts its repeats: " + reasons);

    // The guest node's events follow the same rules.
    awaitEvent(world.guest(), "default", vm, "DrainSucceeded");
    List<CoreV1Event> nodeEvents = events(world.guest(), "default", vm);
    String nodeReasons =
        nodeEvents.stream().map(e -> e.getReason() + "x" + e.getCount()).toList().toString();
    assertTrue(
        nodeEvents.size() <= 4,
        "Event objects of the guest node bounded (one per reason, not per pass): " + nodeReasons);

    List<String> errors =
        logged().stream()
            .filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
            .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage())
            .toList();
    assertEquals(List.of(), errors, "no ERROR in the controller's log");
  }

  /**
   * Pods on {@code node}, each with a budget of its own that allows no disruption; names in lifting
   * order.
   */
  void blockedPods(String ns, String node) throws Exception {
    StringBuilder yaml =
        new StringBuilder(
            """
        apiVersion: v1
        kind: Namespace
        metadata: {name: %s}
        """
                .formatted(ns));
    for (int i = 0; i < BLOCKED_PODS; i++) {
      yaml.append(
          """
          ---
          apiVersion: v1
          kind: Pod
          metadata: {name: pod-%1$02d, namespace: %2$s, labels: {app: app-%1$02d}}
          spec:
            nodeName: %3$s
            terminationGracePeriodSeconds: 0
            containers: [{name: main, image: app:fake}]
          ---
          apiVersion: policy/v1
          kind: PodDisruptionBudget
          metadata: {name: pdb-%1$02d, namespace: %2$s}
          spec:
            minAvailable: 1
            selector: {matchLabels: {app: app-%1$02d}}
          """
              .formatted(i, ns, node));
    }
    world.guestApply(yaml.toString());
    PolicyV1Api policy = new PolicyV1Api(world.guest().client());
    Await.until(
        BLOCKED_PODS + " budgets computed, none allowing a disruption",
        WAIT,
        () -> {
          List<V1PodDisruptionBudget> budgets =
              policy.listNamespacedPodDisruptionBudget(ns).execute().getItems();
          return budgets.size() == BLOCKED_PODS
              && budgets.stream()
                  .allMatch(
                      b ->
                          b.getStatus() != null
                              && Integer.valueOf(1).equals(b.getStatus().getCurrentHealthy())
                              && Integer.valueOf(0).equals(b.getStatus().getDisruptionsAllowed()));
        });
  }

  static final Pattern BLOCKED_PASS =
      Pattern.compile(
          "guest node not drained yet vmi=(\\S+) .* pending=(\\d+) terminating=\\d+"
              + " (blockers=\".*?\") next=");

  boolean blockedPass(String vm, int left) {
    return logged().stream()
        .map(e -> BLOCKED_PASS.matcher(e.getFormattedMessage()))
        .anyMatch(
            m ->
                m.find()
                    && m.group(1).equals(NS + "/" + vm)
                    && Integer.parseInt(m.group(2)) == left);
  }

  Set<String> blockedPassMessages(String vm) {
    return logged().stream()
        .map(e -> BLOCKED_PASS.matcher(e.getFormattedMessage()))
        .filter(Matcher::find)
        .filter(m -> m.group(1).equals(NS + "/" + vm))
        .map(m -> m.group(2) + " " + m.group(3))
        .collect(Collectors.toSet());
  }
}
