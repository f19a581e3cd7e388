package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.evacuate;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.vmi;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.workload;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.reflect.TypeToken;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.util.Watch;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * What one evacuation costs in Event writes in the infra cluster, counted by a watch of the Events
 * in the VMIs' namespace (each create or patch of an Event is one change the watch sees): a
 * straight evacuation writes at most 4, a blocked one at most one more a minute of blocking, and no
 * outcome is left out.
 *
 * <p>The two tests run at once (each counts the writes of its own VMI): the straight evacuation
 * fits in the blocked one's minute and a quarter.
 */
class EventBudgetIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  static final String NS = "ev-event-budget";
  static final String TENANT = "tenant-event-budget";
  static final String INFRA_NODE = "infra-node-5";

  /** The budget of a straight evacuation, the VMI's recreation (its uncordon) included. */
  static final int STRAIGHT_WRITES = 4;

  static EventWrites writes;

  @BeforeAll
  static void start() throws Exception {
    world.tenant(NS, TENANT, world.guest());
    // Closed once the controller is.
    writes = world.closeAfterAll(new EventWrites(world.infra().informerClient(), NS));
    // Retried every second: every step of a blocked drain is an occurrence of DrainBlocked.
    world.startController(
        NS, flags("--drain-timeout 20m --drain-retry-interval 1s --drain-attempt-timeout 2s"));
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aStraightEvacuationWritesAtMostFourEventsInTheInfraCluster() throws Exception {
    String vm = unique("vm-straight");
    String spare = "spare-" + vm;
    world.guest().kwokNodes().createNamed(vm, Map.of());
    world.guest().kwokNodes().createNamed(spare, Map.of());
    workload(world.guest(), unique("shop"), "web", 2, 1, List.of(vm, spare));

    EvictionFixture.machine(world.infra(), NS, TENANT, vm);
    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    evacuate(world.infra(), NS, vm, INFRA_NODE);
    awaitDeleted(world.infra(), NS, vm, uid);
    // KubeVirt recreates it; the node the controller cordoned is uncordoned: the last write.
    EvictionFixture.recreatedRunning(world.infra(), NS, vm, TENANT, "infra-node-6");
    awaitEvent(world.infra(), NS, vm, "GuestNodeUncordoned");
    CoreV1Event drained = awaitEvent(world.infra(), NS, vm, "DrainSucceeded");
    // Events are written off the workers' threads: let any write still queued arrive.
    Thread.sleep(2_000);

    List<String> seen = writes.of(vm);
    assertTrue(
        seen.size() <= STRAIGHT_WRITES,
        "at most " + STRAIGHT_WRITES + " Event writes for a straight evacuation: " + seen);
    // No outcome lost: the drain and the deletion, in one event.
    assertTrue(drained.getMessage().contains("; VMI deleted so that"), drained.getMessage());
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aBlockedEvacuationAddsAtMostOneEventWriteAMinuteAndKeepsItsOutcome() throws Exception {
    String vm = unique("vm-blocked");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    String guestNs = unique("db");
    // One replica, minAvailable 1: no eviction is allowed until the budget goes.
    workload(world.guest(), guestNs, "db", 1, 1, List.of(vm));
    EvictionFixture.machine(world.infra(), NS, TENANT, vm);

    String uid = vmi(world.infra(), NS, vm, TENANT, "External");
    Instant blockedFrom = Instant.now();
    evacuate(world.infra(), NS, vm, INFRA_NODE);
    awaitEvent(world.infra(), NS, vm, "DrainBlocked");
    // Blocked for a minute and a quarter (a drain step a second): long enough for the series to
    // be written again, and for a 30 s interval to show.
    Thread.sleep(
        Duration.ofSeconds(75).minus(Duration.between(blockedFrom, Instant.now())).toMillis());
    new PolicyV1Api(world.guest().client())
        .deleteNamespacedPodDisruptionBudget("db-pdb", guestNs)
        .execute();
    Instant blockedUntil = Instant.now();
    awaitDeleted(world.infra(), NS, vm, uid);
    CoreV1Event drained = awaitEvent(world.infra(), NS, vm, "DrainSucceeded");
    Thread.sleep(2_000);

    // An upper bound of the time the drain was blocked, in started minutes.
    long minutes = (Duration.between(blockedFrom, blockedUntil).toSeconds() + 59) / 60;
    List<String> seen = writes.of(vm);
    long blockedWrites = seen.stream().filter(w -> w.contains("DrainBlocked")).count();
    assertTrue(
        blockedWrites <= minutes,
        "DrainBlocked written at most once a minute of blocking (" + minutes + "): " + seen);
    assertTrue(
        seen.size() <= STRAIGHT_WRITES + minutes,
        "at most "
            + STRAIGHT_WRITES
            + " Event writes plus one a minute of blocking ("
            + minutes
            + "): "
            + seen);
    // No outcome lost: the repeats are counted, the drain and the deletion told.
    CoreV1Event blocked = awaitEvent(world.infra(), NS, vm, "DrainBlocked");
    assertTrue(blocked.getCount() > 1, "the DrainBlocked series counts its repeats: " + blocked);
    assertTrue(drained.getMessage().contains("; VMI deleted so that"), drained.getMessage());
  }

  /** Every write of an Event in one namespace, as a watch sees it (ADDED: create, MODIFIED). */
  static final class EventWrites implements AutoCloseable {
    private final List<CoreV1Event> changes = new ArrayList<>();
    private final List<String> kinds = new ArrayList<>();
    private final Watch<CoreV1Event> watch;
    private final Thread reader;

    EventWrites(ApiClient client, String namespace) throws Exception {
      String from =
          new CoreV1Api(client)
              .listNamespacedEvent(namespace)
              .execute()
              .getMetadata()
              .getResourceVersion();
      watch =
          Watch.createWatch(
              client,
              new CoreV1Api(client)
                  .listNamespacedEvent(namespace)
                  .watch(true)
                  .resourceVersion(from)
                  .timeoutSeconds(3600)
                  .buildCall(null),
              new TypeToken<Watch.Response<CoreV1Event>>() {}.getType());
      reader =
          new Thread(
              () -> {
                try {
                  for (Watch.Response<CoreV1Event> r : watch) {
                    if ("ADDED".equals(r.type) || "MODIFIED".equals(r.type)) {
                      synchronized (changes) {
                        changes.add(r.object);
                        kinds.add(r.type);
                      }
                    }
                  }
                } catch (RuntimeException e) {
                  // closed
                }
              },
              "event-writes");
      reader.setDaemon(true);
      reader.start();
    }

    /** The writes of events about objects named {@code name}: "ADDED Reason xCount". */
    List<String> of(String name) {
      List<String> out = new ArrayList<>();
      synchronized (changes) {
        for (int i = 0; i < changes.size(); i++) {
          CoreV1Event e = changes.get(i);
          if (name.equals(e.getInvolvedObject().getName())) {
            out.add(kinds.get(i) + " " + e.getReason() + " x" + e.getCount());
          }
        }
      }
      return out;
    }

    @Override
    public void close() throws IOException {
      watch.close();
    }
  }
}
