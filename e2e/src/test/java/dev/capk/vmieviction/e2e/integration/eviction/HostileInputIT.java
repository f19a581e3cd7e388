package dev.capk.vmieviction.e2e.integration.eviction;

import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.WAIT;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.annotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitDeleted;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.awaitEvent;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.deleting;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.event;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.events;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.get;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.node;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.nodeAnnotation;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.running;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unique;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionFixture.unschedulable;
import static dev.capk.vmieviction.e2e.integration.eviction.EvictionWorld.flags;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import dev.capk.vmieviction.api.EvictionAnnotations;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.FreePorts;
import dev.capk.vmieviction.manager.Manager;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hostile and broken input (issue 7, items 5 and 8), one row per case: each arranges its objects
 * before the controller starts, so that the controller's first look at every VMI is the hostile
 * one, and all cases run at once (distinct VMIs, guest nodes and Clusters); each row then asserts
 * the Event reason and the outcome: deleted at the deadline (never before, never later than
 * deadline + 30 s), deleted once drained, or left alone, and data it must not touch untouched.
 *
 * <p>Every case's VMI (but the recreated one) carries a finalizer of the test's, so that once the
 * controller deleted it, its annotations and deletion time can still be read.
 */
class HostileInputIT {

  @RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");

  /** Short, so that the deadline cases end in seconds. */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);

  /**
   * For the 2,000-pod guest node, drained by a second controller: a drain that must not need the
   * deadline.
   */
  static final Duration LARGE_DRAIN_TIMEOUT = Duration.ofMinutes(5);

  /** The bound issue 7 sets on any deletion at the deadline. */
  static final Duration DEADLINE_SLACK = Duration.ofSeconds(30);

  static final int LARGE_NODE_PODS = 2000;

  static final String NS = "ev-hostile";
  static final String LARGE_NS = "ev-hostile-large";
  static final String TENANT = "hostile-tenant";
  static final String INFRA_NODE = "infra-node-h1";
  static final String HOLD = "test.capk.dev/hold";
  static final String NEVER_FINISH = "test.capk.dev/never-finishes";
  static final Gson GSON = new Gson();

  static Manager controller;
  static Manager largeController;
  static Instant controllerStarted;
  static final Map<String, Case> CASES = new LinkedHashMap<>();
  static final List<String> guestNamespaces = new ArrayList<>();
  static final List<String> kubeletlessNodes = new java.util.concurrent.CopyOnWriteArrayList<>();
  static final ExecutorService pool = Executors.newFixedThreadPool(8);

  /** One hostile input: objects arranged before the controller starts, then what it proves. */
  record Case(String name, Step arrange, Step verify) {}

  @FunctionalInterface
  interface Step {
    void run() throws Exception;
  }

  /** The VMI of one case. */
  static final class Vm {
    final String ns;
    final String name;
    String uid;

    Vm(String ns, String prefix) {
      this.ns = ns;
      this.name = unique(prefix);
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Set-up: all cases arranged concurrently, then the controller started once for all.

  @BeforeAll
  static void arrangeAllThenStartTheController() throws Exception {
    world.tenant(NS, TENANT, world.guest());
    world.tenant(LARGE_NS, TENANT, world.guest());

    for (Case c :
        List.of(
            // First: it acts mid-drain, before its VMI's deadline.
            vmiRecreatedUnderTheSameNameMidDrain(),
            drainStartAnnotationGarbage(),
            drainStartAnnotationInTheFuture(),
            drainStartAnnotationFarInThePast(),
            drainStartRemovedMidDrain(),
            drainStartMovedLaterMidDrain(),
            clusterInAnotherNamespace(),
            evictionForbiddenByTheGuestsRbac(),
            noStrategyAnywhereLeavesTheVmiToKubeVirt(),
            capkGraceTimeFarInTheFuture(),
            guestNodeMissing(),
            unknownEvictionStrategy(),
            missingClusterLabel(),
            clusterDoesNotExist(),
            kubeconfigSecretMissing(),
            kubeconfigSecretWithoutValue(),
            kubeconfigThatDoesNotParse(),
            kubeconfigPointingAtAClosedPort(),
            kubeconfigWithAWrongCa(),
            kubeconfigRelaxingTls("insecure-skip-tls-verify", "insecure-skip-tls-verify: true"),
            kubeconfigRelaxingTls("tls-server-name", "tls-server-name: kubernetes.default.svc"),
            kubeconfigRelaxingTls("proxy-url", "proxy-url: http://127.0.0.1:3128"),
            kubeconfigWithoutCaData(),
            podsWithFinalizersThatNeverFinish(),
            severalBudgetsMatchingOnePod(),
            clusterPausedLeavesTheGuestUntouched(),
            machineExcludedFromDraining(),
            machineNodeDrainTimeoutShorterThanTheGlobalOne(),
            graceTimeOnTheKubevirtMachineEarlier(),
            machineMissingDegradesToTodaysBehaviourWithOneEvent(),
            guestNodeWithTwoThousandPods())) {
      CASES.put(c.name(), c);
    }
    // Arranging one case may wait for guest workloads: do them side by side.
    Map<String, CompletableFuture<Void>> arranged = new LinkedHashMap<>();
    CASES.forEach(
        (name, c) ->
            arranged.put(
                name,
                CompletableFuture.runAsync(
                    () -> {
                      try {
                        c.arrange().run();
                      } catch (Exception e) {
                        throw new IllegalStateException(
                            "arranging case " + name + " failed: " + e, e);
                      }
                    },
                    pool)));
    arranged.forEach((name, f) -> f.join());

    controllerStarted = Instant.now();
    controller = start(NS, DRAIN_TIMEOUT, Duration.ofSeconds(3), "vmi-eviction-hostile-it");
    largeController =
        start(
            LARGE_NS, LARGE_DRAIN_TIMEOUT, Duration.ofSeconds(20), "vmi-eviction-hostile-large-it");
  }

  static Manager start(
      String namespace, Duration drainTimeout, Duration attemptTimeout, String leaseName)
      throws Exception {
    // The retry interval is short on purpose: a blocked drain then repeats its warning every second
    // or two, more often than the event recorder's allowance of 25 per VMI; the deadline events
    // must still arrive.
    return world.startLeaderElectedController(
        leaseName,
        namespace,
        flags(
            "--drain-timeout %ds --drain-retry-interval 1s --drain-attempt-timeout %ds"
                .formatted(drainTimeout.toSeconds(), attemptTimeout.toSeconds())));
  }

  @AfterAll
  static void stop() {
    // Before the clean-up below (the world would close them after it).
    for (Manager m : new Manager[] {controller, largeController}) {
      if (m != null) {
        m.close();
      }
    }
    pool.shutdownNow();
    // Release what the cases held on purpose, so the shared clusters can clean up.
    for (String ns : List.of(NS, LARGE_NS)) {
      String names =
          world
              .infra()
              .kubectl()
              .run(
                  null,
                  Duration.ofSeconds(30),
                  "-n",
                  ns,
                  "get",
                  "vmi",
                  "-o",
                  "jsonpath={.items[*].metadata.name}")
              .stdout()
              .trim();
      for (String vm : names.isEmpty() ? new String[0] : names.split("\\s+")) {
        world
            .infra()
            .kubectl()
            .run(
                null,
                Duration.ofSeconds(30),
                "-n",
                ns,
                "patch",
                "vmi",
                vm,
                "--type=merge",
                "-p",
                "{\"metadata\":{\"finalizers\":null}}");
      }
    }
    for (String ns : guestNamespaces) {
      String pods =
          world
              .guest()
              .kubectl()
              .run(
                  null,
                  Duration.ofSeconds(30),
                  "-n",
                  ns,
                  "get",
                  "pods",
                  "-o",
                  "jsonpath={.items[*].metadata.name}")
              .stdout()
              .trim();
      for (String pod :
          pods.isEmpty() || ns.startsWith("large") ? new String[0] : pods.split("\\s+")) {
        world
            .guest()
            .kubectl()
            .run(
                null,
                Duration.ofSeconds(30),
                "-n",
                ns,
                "patch",
                "pod",
                pod,
                "--type=merge",
                "-p",
                "{\"metadata\":{\"finalizers\":null}}");
      }
      world
          .guest()
          .kubectl()
          .run(null, Duration.ofSeconds(60), "delete", "namespace", ns, "--wait=false");
    }
    for (String n : kubeletlessNodes) {
      world
          .guest()
          .kubectl()
          .run(null, Duration.ofSeconds(30), "delete", "node", n, "--wait=false");
    }
  }

  @TestFactory
  Stream<DynamicTest> eachHostileInputIsEventedWithItsReasonAndEndsAsExpected() {
    return CASES.values().stream()
        .map(c -> DynamicTest.dynamicTest(c.name(), () -> c.verify().run()));
  }

  // -----------------------------------------------------------------------------------------------
  // The drain start annotation.

  /**
   * Garbage start time: replaced by "now" with a warning; the deadline counts from the replacement.
   */
  static Case drainStartAnnotationGarbage() {
    Vm vm = new Vm(NS, "vm-garbage");
    String garbage = "yesterday, around noon; DROP TABLE vmis";
    return new Case(
        "drain start annotation garbage: DrainStartTimeInvalid, replaced, deleted at the new deadline",
        () -> {
          blockedGuestNode(vm.name);
          create(
              vm,
              TENANT,
              "External",
              Map.of(EvictionAnnotations.DRAIN_START_TIME, garbage, "example.com/keep", "me"));
        },
        () -> {
          CoreV1Event invalid = awaitEvent(world.infra(), vm.ns, vm.name, "DrainStartTimeInvalid");
          assertEquals("Warning", invalid.getType());
          assertTrue(
              invalid.getMessage().contains("is not an RFC 3339 time"), invalid.getMessage());
          Instant start = assertStartReplacedByControllerTime(vm, garbage);
          awaitEvent(world.infra(), vm.ns, vm.name, "DrainBlocked");
          assertDeletedAtTheDeadline(vm, start, DRAIN_TIMEOUT);
          assertOnlyOurAnnotationChanged(vm, Map.of("example.com/keep", "me"));
        });
  }

  /** A start time in the future would push the deadline out: replaced by "now" with a warning. */
  static Case drainStartAnnotationInTheFuture() {
    Vm vm = new Vm(NS, "vm-future");
    String future =
        DateTimeFormatter.ISO_INSTANT.format(
            Instant.now().plus(365, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS));
    return new Case(
        "drain start annotation in the future: DrainStartTimeInvalid, replaced, deleted at the new deadline",
        () -> {
          blockedGuestNode(vm.name);
          create(vm, TENANT, "External", Map.of(EvictionAnnotations.DRAIN_START_TIME, future));
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "DrainStartTimeInvalid");
          Instant start = assertStartReplacedByControllerTime(vm, future);
          assertDeletedAtTheDeadline(vm, start, DRAIN_TIMEOUT);
        });
  }

  /**
   * A start long ago is a valid start whose deadline has passed: deleted at once, the guest
   * untouched.
   */
  static Case drainStartAnnotationFarInThePast() {
    Vm vm = new Vm(NS, "vm-past");
    String past = "2001-01-01T00:00:00Z";
    return new Case(
        "drain start annotation far in the past: DrainDeadlinePassed at once, guest untouched",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          create(vm, TENANT, "External", Map.of(EvictionAnnotations.DRAIN_START_TIME, past));
        },
        () -> {
          awaitDeleted(world.infra(), vm.ns, vm.name, vm.uid);
          CoreV1Event passed = awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed");
          assertTrue(passed.getMessage().contains("2001-01-01T00:00:30Z"), passed.getMessage());
          awaitEvent(world.infra(), vm.ns, vm.name, "VMIDeleted");
          Map<String, Object> v = get(world.infra(), vm.ns, vm.name).orElseThrow();
          assertEquals(
              Optional.of(past),
              annotation(v, EvictionAnnotations.DRAIN_START_TIME),
              "a valid start is kept");
          assertFalse(
              unschedulable(node(world.guest(), vm.name)),
              "no guest access past the deadline: node not cordoned");
          assertTrue(
              event(world.infra(), vm.ns, vm.name, "DrainStarted").isEmpty(),
              "not a new evacuation");
        });
  }

  /** CAPK's grace time in the year 9999 must not lift the global drain timeout. */
  static Case capkGraceTimeFarInTheFuture() {
    Vm vm = new Vm(NS, "vm-grace");
    return new Case(
        "CAPK grace time in 9999: the drain timeout still deletes at start + timeout",
        () -> {
          blockedGuestNode(vm.name);
          create(
              vm,
              TENANT,
              "External",
              Map.of(EvictionAnnotations.CAPK_DELETION_GRACE_TIME, "9999-12-31T23:59:59Z"));
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "DrainBlocked");
          Instant start = startOf(vm);
          assertDeletedAtTheDeadline(vm, start, DRAIN_TIMEOUT);
          assertTrue(
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed")
                  .getMessage()
                  .contains("drain timeout"));
        });
  }

  // -----------------------------------------------------------------------------------------------
  // What leads to the guest cluster.

  static Case missingClusterLabel() {
    Vm vm = new Vm(NS, "vm-nolabel");
    return new Case(
        "missing cluster label: MissingClusterLabel, deleted at the deadline",
        () -> create(vm, null, "External", Map.of()),
        () -> {
          CoreV1Event e = awaitEvent(world.infra(), vm.ns, vm.name, "MissingClusterLabel");
          assertTrue(e.getMessage().contains("cluster.x-k8s.io/cluster-name"), e.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
        });
  }

  static Case clusterDoesNotExist() {
    Vm vm = new Vm(NS, "vm-nocluster");
    return new Case(
        "a Cluster that does not exist: ClusterNotFound, deleted at the deadline",
        () -> create(vm, "no-such-cluster", "External", Map.of()),
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "ClusterNotFound");
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertTrue(
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed")
                  .getMessage()
                  .contains("not found"));
        });
  }

  static Case kubeconfigSecretMissing() {
    Vm vm = new Vm(NS, "vm-nosecret");
    String cluster = "hostile-no-secret";
    return new Case(
        "a missing kubeconfig Secret: KubeconfigSecretNotFound, deleted at the deadline",
        () -> {
          EvictionFixture.cluster(world.infra(), NS, cluster);
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "KubeconfigSecretNotFound");
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
        });
  }

  static Case kubeconfigSecretWithoutValue() {
    Vm vm = new Vm(NS, "vm-novalue");
    String cluster = "hostile-no-value";
    String[] version = new String[1];
    return new Case(
        "a kubeconfig Secret without 'value': KubeconfigSecretMissingValue, deleted at the deadline, Secret untouched",
        () -> {
          EvictionFixture.cluster(world.infra(), NS, cluster);
          // The kubeconfig under another key, as a hand-made Secret might have it.
          world.infraApply(
              """
              apiVersion: v1
              kind: Secret
              metadata: {name: %s-kubeconfig, namespace: %s}
              data:
                kubeconfig: %s
              """
                  .formatted(cluster, NS, b64("apiVersion: v1\nkind: Config\n")));
          version[0] = secretVersion(cluster);
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          CoreV1Event e = awaitEvent(world.infra(), vm.ns, vm.name, "KubeconfigSecretMissingValue");
          assertTrue(e.getMessage().contains("'value'"), e.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertEquals(version[0], secretVersion(cluster), "the Secret was not written to");
        });
  }

  static Case kubeconfigThatDoesNotParse() {
    Vm vm = new Vm(NS, "vm-unparsable");
    String cluster = "hostile-unparsable";
    String secretLooking = "dG9rZW4tdGhhdC1tdXN0LW5ldmVyLWJlLXByaW50ZWQ";
    return new Case(
        "a kubeconfig that does not parse: KubeconfigInvalid, nothing of it quoted, deleted at the deadline",
        () -> {
          EvictionFixture.cluster(world.infra(), NS, cluster);
          EvictionFixture.kubeconfigSecret(
              world.infra(),
              NS,
              cluster,
              "users: [{token: " + secretLooking + "}\n  : {{ not: yaml [");
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          CoreV1Event e = awaitEvent(world.infra(), vm.ns, vm.name, "KubeconfigInvalid");
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          for (CoreV1Event each : events(world.infra(), vm.ns, vm.name)) {
            assertFalse(
                each.getMessage().contains(secretLooking),
                "Secret content in an event: " + each.getReason());
          }
          assertTrue(
              e.getMessage().contains("not valid YAML")
                  || e.getMessage().contains("not a kubeconfig"),
              e.getMessage());
        });
  }

  static Case kubeconfigPointingAtAClosedPort() {
    Vm vm = new Vm(NS, "vm-closedport");
    String cluster = "hostile-closed-port";
    return new Case(
        "a kubeconfig pointing at a closed port: GuestAPIUnavailable, deleted at the deadline",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.cluster(world.infra(), NS, cluster);
          // Nobody listens there (FreePorts hands out ports it found closed).
          EvictionFixture.kubeconfigSecret(
              world.infra(),
              NS,
              cluster,
              world
                  .guest()
                  .adminKubeconfigYaml()
                  .replace(world.guest().serverUrl(), "https://127.0.0.1:" + FreePorts.next()));
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "GuestAPIUnavailable");
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertFalse(unschedulable(node(world.guest(), vm.name)));
        });
  }

  /**
   * Item 8: the guest's real API server and working credentials, but a CA that did not sign its
   * certificate. Were the check skipped, the node would be cordoned: it must stay untouched.
   */
  static Case kubeconfigWithAWrongCa() {
    Vm vm = new Vm(NS, "vm-wrongca");
    String cluster = "hostile-wrong-ca";
    String wrongCa = b64(world.infra().caCertificatePem());
    return new Case(
        "a kubeconfig with a wrong CA: GuestAPICertificateRejected, no insecure fallback, deleted at the deadline",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.cluster(world.infra(), NS, cluster);
          String kc =
              world
                  .guest()
                  .adminKubeconfigYaml()
                  .replaceFirst(
                      "certificate-authority-data: \\S+", "certificate-authority-data: " + wrongCa);
          assertNotEquals(world.guest().adminKubeconfigYaml(), kc);
          EvictionFixture.kubeconfigSecret(world.infra(), NS, cluster, kc);
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          CoreV1Event refused =
              awaitEvent(world.infra(), vm.ns, vm.name, "GuestAPICertificateRejected");
          assertEquals("Warning", refused.getType());
          assertTrue(refused.getMessage().contains("certificate"), refused.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertFalse(
              unschedulable(node(world.guest(), vm.name)),
              "the guest was never reached: no insecure fallback");
          assertEquals(
              Optional.empty(),
              nodeAnnotation(node(world.guest(), vm.name), EvictionAnnotations.CORDONED_BY));
          assertTrue(event(world.infra(), vm.ns, vm.name, "GuestNodeCordoned").isEmpty());
          for (CoreV1Event each : events(world.infra(), vm.ns, vm.name)) {
            assertFalse(
                each.getMessage().contains(wrongCa.substring(0, 40)), "CA data in an event");
          }
        });
  }

  /**
   * Issue 12 item 4: the guest's real API server and working credentials, but a cluster field that
   * relaxes TLS. Refused by name before any request (so the node stays untouched, where the
   * credentials alone would have cordoned and drained it), and the VMI still goes at its deadline.
   */
  static Case kubeconfigRelaxingTls(String field, String line) {
    Vm vm = new Vm(NS, "vm-tls-" + field.substring(0, 5));
    String cluster = "hostile-tls-" + field;
    return new Case(
        "a kubeconfig with "
            + field
            + ": KubeconfigInvalid naming it, guest untouched, deleted at the deadline",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.cluster(world.infra(), NS, cluster);
          EvictionFixture.kubeconfigSecret(
              world.infra(),
              NS,
              cluster,
              withClusterField(world.guest().adminKubeconfigYaml(), line));
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          CoreV1Event refused = awaitEvent(world.infra(), vm.ns, vm.name, "KubeconfigInvalid");
          assertEquals("Warning", refused.getType());
          assertTrue(refused.getMessage().contains("'" + field + "'"), refused.getMessage());
          String value = line.substring(line.indexOf(':') + 1).trim();
          for (CoreV1Event each : events(world.infra(), vm.ns, vm.name)) {
            assertFalse(
                each.getMessage().contains(value),
                "the field's value quoted in " + each.getReason());
          }
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertFalse(unschedulable(node(world.guest(), vm.name)), "the guest was never reached");
          assertEquals(
              Optional.empty(),
              nodeAnnotation(node(world.guest(), vm.name), EvictionAnnotations.CORDONED_BY));
          assertTrue(event(world.infra(), vm.ns, vm.name, "GuestNodeCordoned").isEmpty());
        });
  }

  /**
   * No CA data: client-java then verifies against the JVM's default trust store (never trust-all),
   * which does not know the harness's CA: refused like a wrong CA, the guest untouched.
   */
  static Case kubeconfigWithoutCaData() {
    Vm vm = new Vm(NS, "vm-noca");
    String cluster = "hostile-no-ca";
    return new Case(
        "a kubeconfig without CA data: verified against the system trust store, GuestAPICertificateRejected",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.cluster(world.infra(), NS, cluster);
          String kc =
              world
                  .guest()
                  .adminKubeconfigYaml()
                  .replaceFirst("(?m)^\\s*certificate-authority-data: \\S+\\n", "");
          assertFalse(kc.contains("certificate-authority"), "CA data removed");
          EvictionFixture.kubeconfigSecret(world.infra(), NS, cluster, kc);
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "GuestAPICertificateRejected");
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertFalse(unschedulable(node(world.guest(), vm.name)), "the guest was never reached");
        });
  }

  /**
   * {@code line} added to the kubeconfig's cluster entry, beside its certificate-authority-data.
   */
  static String withClusterField(String kubeconfig, String line) {
    String changed =
        kubeconfig.replaceFirst(
            "(?m)^(\\s*)(certificate-authority-data: \\S+)$", "$1$2\n$1" + line);
    assertNotEquals(kubeconfig, changed);
    return changed;
  }

  // -----------------------------------------------------------------------------------------------
  // Cluster API's own contract (issue 15, item 4): the Cluster, the KubevirtMachine named by the
  // VMI's label and the Machine owning it.

  /** A paused Cluster: no cordon, no eviction, a ClusterPaused warning, deleted at the deadline. */
  static Case clusterPausedLeavesTheGuestUntouched() {
    Vm vm = new Vm(NS, "vm-paused");
    String cluster = "hostile-paused";
    String[] guestNs = new String[1];
    return new Case(
        "Cluster paused: ClusterPaused, guest node never cordoned nor drained, deleted at the deadline",
        () -> {
          guestNs[0] = blockedGuestNode(vm.name);
          world.infraApply(
              """
                  apiVersion: cluster.x-k8s.io/v1beta1
                  kind: Cluster
                  metadata: {name: %s, namespace: %s}
                  spec: {paused: true}
                  """
                  .formatted(cluster, NS));
          EvictionFixture.kubeconfigSecret(
              world.infra(), NS, cluster, world.guest().adminKubeconfigYaml());
          machineAndKubevirtMachine(vm.name, Map.of(), Map.of(), Map.of());
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          CoreV1Event paused = awaitEvent(world.infra(), vm.ns, vm.name, "ClusterPaused");
          assertEquals("Warning", paused.getType());
          assertTrue(paused.getMessage().contains(NS + "/" + cluster), paused.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertFalse(unschedulable(node(world.guest(), vm.name)), "never cordoned");
          assertTrue(event(world.infra(), vm.ns, vm.name, "GuestNodeCordoned").isEmpty());
          assertEquals(
              1, running(world.guest(), guestNs[0], "db").size(), "its pod was never evicted");
        });
  }

  /** exclude-node-draining on the Machine: deleted at once, the guest node untouched. */
  static Case machineExcludedFromDraining() {
    Vm vm = new Vm(NS, "vm-nodrain");
    String[] guestNs = new String[1];
    return new Case(
        "Machine with exclude-node-draining: NodeDrainExcluded, deleted at once, node not cordoned",
        () -> {
          guestNs[0] = blockedGuestNode(vm.name);
          machineAndKubevirtMachine(
              vm.name,
              Map.of("machine.cluster.x-k8s.io/exclude-node-draining", ""),
              Map.of(),
              Map.of());
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          awaitDeleted(world.infra(), vm.ns, vm.name, vm.uid);
          CoreV1Event excluded = awaitEvent(world.infra(), vm.ns, vm.name, "NodeDrainExcluded");
          assertEquals("Normal", excluded.getType());
          assertTrue(
              awaitEvent(world.infra(), vm.ns, vm.name, "VMIDeleted")
                  .getMessage()
                  .contains("drain_excluded"));
          assertTrue(
              deletionTime(vm).isBefore(startOf(vm).plus(DRAIN_TIMEOUT)),
              "deleted before the deadline");
          assertTrue(event(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed").isEmpty());
          assertFalse(unschedulable(node(world.guest(), vm.name)), "never cordoned");
          assertTrue(event(world.infra(), vm.ns, vm.name, "GuestNodeCordoned").isEmpty());
          assertEquals(
              1, running(world.guest(), guestNs[0], "db").size(), "its pod was never evicted");
        });
  }

  static final Duration MACHINE_DRAIN_TIMEOUT = Duration.ofSeconds(10);

  /** The Machine's nodeDrainTimeout, shorter than --drain-timeout, is this VMI's drain timeout. */
  static Case machineNodeDrainTimeoutShorterThanTheGlobalOne() {
    Vm vm = new Vm(NS, "vm-machinetimeout");
    return new Case(
        "Machine nodeDrainTimeout 10s < --drain-timeout 30s: DrainDeadlineShortened, deleted at start + 10s",
        () -> {
          blockedGuestNode(vm.name);
          machineAndKubevirtMachine(
              vm.name,
              Map.of(),
              Map.of("nodeDrainTimeout", MACHINE_DRAIN_TIMEOUT.toSeconds() + "s"),
              Map.of());
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          CoreV1Event shortened =
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlineShortened");
          assertEquals("Normal", shortened.getType());
          Instant start = startOf(vm);
          assertDeletedAtTheDeadline(vm, start, MACHINE_DRAIN_TIMEOUT);
          String passed =
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed").getMessage();
          assertTrue(passed.contains("Machine " + NS + "/" + vm.name), passed);
        });
  }

  /**
   * CAPK's grace time on the KubevirtMachine, earlier than start + --drain-timeout, wins. It is
   * already past when the controller first looks (CAPK wrote it long ago), so the VMI goes at that
   * first look, before any guest access.
   */
  static Case graceTimeOnTheKubevirtMachineEarlier() {
    Vm vm = new Vm(NS, "vm-kvmgrace");
    String grace =
        DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.SECONDS));
    return new Case(
        "CAPK grace time on the KubevirtMachine earlier than the drain timeout: deleted at it, not at start + 30s",
        () -> {
          blockedGuestNode(vm.name);
          machineAndKubevirtMachine(
              vm.name,
              Map.of(),
              Map.of(),
              Map.of(EvictionAnnotations.CAPK_DELETION_GRACE_TIME, grace));
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          awaitDeleted(world.infra(), vm.ns, vm.name, vm.uid);
          String passed =
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed").getMessage();
          assertTrue(passed.contains("KubevirtMachine " + NS + "/" + vm.name), passed);
          assertTrue(passed.contains(grace), passed);
          Instant start = startOf(vm);
          assertTrue(
              deletionTime(vm).isBefore(start.plus(DRAIN_TIMEOUT)),
              "deleted before start + --drain-timeout");
          assertFalse(unschedulable(node(world.guest(), vm.name)), "the guest was never touched");
        });
  }

  /** No owner Machine: today's behaviour (drained, deleted at the deadline) and one event. */
  static Case machineMissingDegradesToTodaysBehaviourWithOneEvent() {
    Vm vm = new Vm(NS, "vm-nomachine");
    return new Case(
        "KubevirtMachine without its Machine: one MachineContractUnavailable, drained as today, deleted at the deadline",
        () -> {
          blockedGuestNode(vm.name);
          kubevirtMachine(vm.name, null, Map.of());
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "GuestNodeCordoned");
          awaitEvent(world.infra(), vm.ns, vm.name, "DrainBlocked");
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          List<CoreV1Event> unavailable =
              events(world.infra(), vm.ns, vm.name).stream()
                  .filter(e -> "MachineContractUnavailable".equals(e.getReason()))
                  .toList();
          assertEquals(1, unavailable.size());
          CoreV1Event e = unavailable.get(0);
          assertEquals("Warning", e.getType());
          assertEquals(1, e.getCount() == null ? 1 : e.getCount(), "said once, not per reconcile");
          assertTrue(e.getMessage().contains("has no owner Machine"), e.getMessage());
        });
  }

  /**
   * A Machine named like the VMI, with these annotations and spec, and the KubevirtMachine it owns
   * (by UID, as Cluster API sets it, so that the garbage collector leaves it alone).
   */
  static void machineAndKubevirtMachine(
      String name,
      Map<String, String> machineAnnotations,
      Map<String, Object> machineSpec,
      Map<String, String> kubevirtMachineAnnotations) {
    Map<String, Object> spec = new LinkedHashMap<>(machineSpec);
    spec.put("clusterName", TENANT);
    Map<String, Object> machine =
        Map.of(
            "apiVersion",
            "cluster.x-k8s.io/v1beta1",
            "kind",
            "Machine",
            "metadata",
            Map.of("name", name, "namespace", NS, "annotations", machineAnnotations),
            "spec",
            spec);
    world.infra().kubectl().runOrFail(GSON.toJson(machine), "create", "-f", "-");
    String uid = EvictionFixture.machineUid(world.infra(), NS, name);
    kubevirtMachine(name, uid, kubevirtMachineAnnotations);
  }

  /** A KubevirtMachine; {@code ownerUid} null: no owner Machine (yet). */
  static void kubevirtMachine(String name, String ownerUid, Map<String, String> annotations) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("name", name);
    metadata.put("namespace", NS);
    metadata.put("annotations", annotations);
    if (ownerUid != null) {
      metadata.put(
          "ownerReferences",
          List.of(
              Map.of(
                  "apiVersion",
                  "cluster.x-k8s.io/v1beta1",
                  "kind",
                  "Machine",
                  "name",
                  name,
                  "uid",
                  ownerUid)));
    }
    Map<String, Object> kvm =
        Map.of(
            "apiVersion",
            "infrastructure.cluster.x-k8s.io/v1alpha1",
            "kind",
            "KubevirtMachine",
            "metadata",
            metadata,
            "spec",
            Map.of());
    world.infra().kubectl().runOrFail(GSON.toJson(kvm), "create", "-f", "-");
  }

  // -----------------------------------------------------------------------------------------------
  // The VMI itself.

  static Case guestNodeMissing() {
    Vm vm = new Vm(NS, "vm-nonode");
    return new Case(
        "a guest node missing: GuestNodeNotFound, deleted at once (nothing to drain)",
        () -> create(vm, TENANT, "External", Map.of()),
        () -> {
          awaitDeleted(world.infra(), vm.ns, vm.name, vm.uid);
          CoreV1Event e = awaitEvent(world.infra(), vm.ns, vm.name, "GuestNodeNotFound");
          assertEquals("Normal", e.getType());
          assertTrue(e.getMessage().contains("kubevirt://" + vm.name), e.getMessage());
          awaitEvent(world.infra(), vm.ns, vm.name, "VMIDeleted");
          Instant deletedAt = deletionTime(vm);
          assertTrue(
              deletedAt.isBefore(startOf(vm).plus(DRAIN_TIMEOUT)),
              "deleted before the deadline: " + deletedAt);
          assertTrue(event(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed").isEmpty());
        });
  }

  static Case unknownEvictionStrategy() {
    Vm vm = new Vm(NS, "vm-unknown");
    return new Case(
        "an unknown eviction strategy: EvictionStrategyUnknown, left alone",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          create(vm, TENANT, "Exterminate", Map.of());
        },
        () -> {
          CoreV1Event e = awaitEvent(world.infra(), vm.ns, vm.name, "EvictionStrategyUnknown");
          assertEquals("Warning", e.getType());
          assertTrue(e.getMessage().contains("\"Exterminate\""), e.getMessage());
          // Past the deadline it would have had: still there, untouched.
          sleepUntil(controllerStarted.plus(DRAIN_TIMEOUT).plusSeconds(3));
          Map<String, Object> v = get(world.infra(), vm.ns, vm.name).orElseThrow();
          assertEquals(vm.uid, EvictionFixture.uid(v));
          assertFalse(deleting(v), "not deleted");
          assertEquals(
              Optional.empty(),
              annotation(v, EvictionAnnotations.DRAIN_START_TIME),
              "no drain start recorded");
          assertFalse(unschedulable(node(world.guest(), vm.name)), "guest node not cordoned");
          assertTrue(event(world.infra(), vm.ns, vm.name, "DrainStarted").isEmpty());
        });
  }

  /**
   * KubeVirt replaced the VMI (same name, new UID) while its guest node was being drained: the new
   * one is not evacuating and must not be deleted, nor inherit the old drain start; the node the
   * controller cordoned for the old one is uncordoned once the new one runs.
   */
  static Case vmiRecreatedUnderTheSameNameMidDrain() {
    Vm vm = new Vm(NS, "vm-recreated");
    String[] guestNs = new String[1];
    return new Case(
        "a VMI recreated under the same name mid-drain: the new UID is kept, the node uncordoned",
        () -> {
          guestNs[0] = blockedGuestNode(vm.name);
          create(vm, TENANT, "External", Map.of(), false);
        },
        () -> {
          awaitEvent(world.infra(), vm.ns, vm.name, "DrainBlocked");
          Instant oldStart = startOf(vm);
          String oldUid = vm.uid;
          assertEquals(
              Optional.of(oldUid),
              nodeAnnotation(node(world.guest(), vm.name), EvictionAnnotations.CORDONED_BY));

          world.infraKubectl("-n", vm.ns, "delete", "vmi", vm.name, "--wait=true");
          String newUid = createVmi(vm.ns, vm.name, TENANT, "External", Map.of(), false);
          assertNotEquals(oldUid, newUid);
          EvictionFixture.running(world.infra(), vm.ns, vm.name, "infra-node-h2");

          Await.until(
              "guest node " + vm.name + " uncordoned for the new VMI",
              WAIT,
              () -> !unschedulable(node(world.guest(), vm.name)));
          assertEquals(
              Optional.empty(),
              nodeAnnotation(node(world.guest(), vm.name), EvictionAnnotations.CORDONED_BY));
          sleepUntil(oldStart.plus(DRAIN_TIMEOUT).plusSeconds(3));
          Map<String, Object> v = get(world.infra(), vm.ns, vm.name).orElseThrow();
          assertEquals(newUid, EvictionFixture.uid(v), "the new VMI was not deleted");
          assertFalse(deleting(v));
          assertEquals(
              Optional.empty(),
              annotation(v, EvictionAnnotations.DRAIN_START_TIME),
              "no inherited drain start");
          List<CoreV1Event> aboutNew =
              events(world.infra(), vm.ns, vm.name).stream()
                  .filter(e -> newUid.equals(e.getInvolvedObject().getUid()))
                  .toList();
          assertTrue(
              aboutNew.stream()
                  .noneMatch(
                      e ->
                          List.of("DrainStarted", "VMIDeleted", "DrainDeadlinePassed")
                              .contains(e.getReason())),
              "no evacuation of the new VMI: "
                  + aboutNew.stream().map(CoreV1Event::getReason).toList());
          assertEquals(
              1,
              running(world.guest(), guestNs[0], "db").size(),
              "the budget-protected pod was never evicted");
        });
  }

  // -----------------------------------------------------------------------------------------------
  // What the guest node holds.

  /**
   * kwok, which plays the kubelets, also clears the finalizers of pods it deletes (a kubelet never
   * does): the node here is a plain Ready Node that no kwok manages, so the finalizers stay.
   */
  static Case podsWithFinalizersThatNeverFinish() {
    Vm vm = new Vm(NS, "vm-finalizers");
    String ns = guestNamespace("stuck");
    return new Case(
        "pods with finalizers that never finish: DrainBlocked (still terminating), deleted at the deadline",
        () -> {
          readyNodeWithoutKubelet(vm.name);
          createPods(ns, vm.name, "stuck", 3, List.of(NEVER_FINISH));
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          Await.until(
              "the stuck pods are being deleted",
              WAIT,
              () ->
                  new CoreV1Api(world.guest().client())
                          .listNamespacedPod(ns).execute().getItems().stream()
                              .filter(p -> p.getMetadata().getDeletionTimestamp() != null)
                              .count()
                      == 3);
          CoreV1Event blocked = awaitEvent(world.infra(), vm.ns, vm.name, "DrainBlocked");
          assertTrue(blocked.getMessage().contains("not drained yet"), blocked.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          CoreV1Event passed = awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed");
          assertTrue(passed.getMessage().contains("terminating"), passed.getMessage());
          assertTrue(event(world.infra(), vm.ns, vm.name, "DrainSucceeded").isEmpty());
        });
  }

  /**
   * The eviction API answers 500 for a pod two budgets select: the pod stays, the deadline fires.
   */
  static Case severalBudgetsMatchingOnePod() {
    Vm vm = new Vm(NS, "vm-2pdbs");
    String ns = guestNamespace("twopdb");
    List<String> uids = new ArrayList<>();
    return new Case(
        "several PDBs matching one pod: DrainBlocked naming them, pods kept, deleted at the deadline",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.workload(world.guest(), ns, "web", 2, 0, List.of(vm.name));
          world.guestApply(
              """
              apiVersion: policy/v1
              kind: PodDisruptionBudget
              metadata: {name: web-second-pdb, namespace: %s}
              spec:
                maxUnavailable: 1
                selector: {matchLabels: {app: web}}
              """
                  .formatted(ns));
          running(world.guest(), ns, "web").forEach(p -> uids.add(p.getMetadata().getUid()));
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          Await.until(
              "a DrainBlocked naming the budgets",
              WAIT,
              () ->
                  events(world.infra(), vm.ns, vm.name).stream()
                      .anyMatch(
                          e ->
                              "DrainBlocked".equals(e.getReason())
                                  && e.getMessage().contains("more than one PodDisruptionBudget")));
          // The failed pods have not left the node: they are counted.
          CoreV1Event blocked =
              events(world.infra(), vm.ns, vm.name).stream()
                  .filter(e -> "DrainBlocked".equals(e.getReason()))
                  .findFirst()
                  .orElseThrow();
          assertTrue(blocked.getMessage().contains("(2 pod(s) left)"), blocked.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          CoreV1Event passed = awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed");
          assertTrue(passed.getMessage().contains("2 pod(s) left"), passed.getMessage());
          assertEquals(
              uids.stream().sorted().toList(),
              running(world.guest(), ns, "web").stream()
                  .map(p -> p.getMetadata().getUid())
                  .sorted()
                  .toList(),
              "no pod evicted: the eviction API cannot honour two budgets");
        });
  }

  /** 2,000 pods on the guest node: drained completely, by the drain and not by the deadline. */
  static Case guestNodeWithTwoThousandPods() {
    Vm vm = new Vm(LARGE_NS, "vm-large");
    String ns = guestNamespace("large");
    return new Case(
        "a guest with 2,000 pods on the node: DrainSucceeded, every pod gone, deleted before the deadline",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          createPods(ns, vm.name, "p", LARGE_NODE_PODS, List.of());
          create(vm, TENANT, "External", Map.of());
        },
        () -> {
          Await.until(
              "VMI " + vm.name + " deleted after draining 2,000 pods",
              LARGE_DRAIN_TIMEOUT.plus(DEADLINE_SLACK),
              () -> EvictionFixture.deletedOrDeleting(world.infra(), vm.ns, vm.name, vm.uid));
          awaitEvent(world.infra(), vm.ns, vm.name, "DrainSucceeded");
          assertTrue(
              event(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed").isEmpty(),
              "drained, not deleted at the deadline");
          assertEquals(
              0,
              new CoreV1Api(world.guest().client())
                  .listNamespacedPod(ns).execute().getItems().stream()
                      .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                      .count(),
              "no pod left on the node");
          assertTrue(unschedulable(node(world.guest(), vm.name)));
        });
  }

  // -----------------------------------------------------------------------------------------------
  // Tampering mid-drain, other tenants' credentials, the guest's own refusals (issue 12).

  /**
   * Once the case's drain is blocked (its first DrainBlocked), runs {@code tamper} with the start
   * recorded at that moment, and yields that start. Started while arranging: the cases are verified
   * one after another, and by a later case's turn its VMI's deadline would have passed.
   */
  static CompletableFuture<Instant> whenBlocked(
      Vm vm, java.util.function.Function<Instant, Step> tamper) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            awaitEvent(world.infra(), vm.ns, vm.name, "DrainBlocked");
            Instant start = startOf(vm);
            tamper.apply(start).run();
            return start;
          } catch (Exception e) {
            throw new IllegalStateException("tampering with " + vm.name + " failed: " + e, e);
          }
        },
        pool);
  }

  /**
   * Removing the drain start mid-drain would restart the clock: it is written back, the deadline
   * holds.
   */
  static Case drainStartRemovedMidDrain() {
    Vm vm = new Vm(NS, "vm-start-removed");
    List<CompletableFuture<Instant>> tampered = new ArrayList<>();
    return new Case(
        "drain start removed mid-drain: DrainStartTimeRestored, the original deadline holds",
        () -> {
          blockedGuestNode(vm.name);
          create(vm, TENANT, "External", Map.of());
          tampered.add(
              whenBlocked(
                  vm,
                  start ->
                      () ->
                          world.infraKubectl(
                              "-n",
                              vm.ns,
                              "annotate",
                              "vmi",
                              vm.name,
                              EvictionAnnotations.DRAIN_START_TIME + "-")));
        },
        () -> {
          Instant start = tampered.get(0).get(2, TimeUnit.MINUTES);
          CoreV1Event restored =
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainStartTimeRestored");
          assertEquals("Warning", restored.getType());
          assertTrue(restored.getMessage().contains("was removed"), restored.getMessage());
          assertEquals(start, startOf(vm), "the earliest start is written back");
          assertDeletedAtTheDeadline(vm, start, DRAIN_TIMEOUT);
          assertTrue(
              event(world.infra(), vm.ns, vm.name, "DrainStartTimeInvalid").isEmpty(),
              "not taken for a new evacuation");
        });
  }

  /** A later drain start mid-drain would push the deadline out: the earliest is written back. */
  static Case drainStartMovedLaterMidDrain() {
    Vm vm = new Vm(NS, "vm-start-later");
    List<CompletableFuture<Instant>> tampered = new ArrayList<>();
    // Later than the start, and no later than now + a few seconds: a valid time in every other
    // respect.
    java.util.function.Function<Instant, String> later =
        start -> DateTimeFormatter.ISO_INSTANT.format(start.plusSeconds(10));
    return new Case(
        "drain start moved later mid-drain: DrainStartTimeRestored, the original deadline holds",
        () -> {
          blockedGuestNode(vm.name);
          create(vm, TENANT, "External", Map.of());
          tampered.add(
              whenBlocked(
                  vm,
                  start ->
                      () ->
                          world.infraKubectl(
                              "-n",
                              vm.ns,
                              "annotate",
                              "--overwrite",
                              "vmi",
                              vm.name,
                              EvictionAnnotations.DRAIN_START_TIME + "=" + later.apply(start))));
        },
        () -> {
          Instant start = tampered.get(0).get(2, TimeUnit.MINUTES);
          CoreV1Event restored =
              awaitEvent(world.infra(), vm.ns, vm.name, "DrainStartTimeRestored");
          assertTrue(
              restored.getMessage().contains("was moved later")
                  && restored.getMessage().contains(later.apply(start)),
              restored.getMessage());
          assertEquals(start, startOf(vm), "the earliest start is written back");
          assertDeletedAtTheDeadline(vm, start, DRAIN_TIMEOUT);
        });
  }

  /**
   * A VMI whose machine-namespace label names another tenant's namespace: the Cluster there (with a
   * working kubeconfig) must not be used. Were it used, the other tenant's node would be cordoned.
   */
  static Case clusterInAnotherNamespace() {
    Vm vm = new Vm(NS, "vm-crossns");
    String victim = "victim-tenant";
    return new Case(
        "a VMI naming a Cluster in another namespace: ClusterNamespaceRefused, that tenant untouched",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.cluster(world.infra(), LARGE_NS, victim);
          EvictionFixture.kubeconfigSecret(
              world.infra(), LARGE_NS, victim, world.guest().adminKubeconfigYaml());
          vm.uid = createVmi(vm.ns, vm.name, victim, "External", Map.of(), true);
          world.infraKubectl(
              "-n",
              vm.ns,
              "label",
              "--overwrite",
              "vmi",
              vm.name,
              "capk.cluster.x-k8s.io/kubevirt-machine-namespace=" + LARGE_NS);
          EvictionFixture.evacuate(world.infra(), vm.ns, vm.name, INFRA_NODE);
        },
        () -> {
          CoreV1Event refused =
              awaitEvent(world.infra(), vm.ns, vm.name, "ClusterNamespaceRefused");
          assertEquals("Warning", refused.getType());
          assertTrue(refused.getMessage().contains(LARGE_NS + "/" + victim), refused.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertFalse(
              unschedulable(node(world.guest(), vm.name)),
              "the other tenant's node was never cordoned");
          assertTrue(event(world.infra(), vm.ns, vm.name, "GuestNodeCordoned").isEmpty());
        });
  }

  /**
   * The tenant's RBAC lets us cordon but not evict: GuestAPIForbidden naming the request, not
   * DrainBlocked.
   */
  static Case evictionForbiddenByTheGuestsRbac() {
    Vm vm = new Vm(NS, "vm-noevict");
    String cluster = "hostile-no-evict";
    String ns = guestNamespace("noevict");
    return new Case(
        "the guest's RBAC refuses evictions: GuestAPIForbidden naming pods/eviction, deleted at the deadline",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          EvictionFixture.workload(world.guest(), ns, "web", 1, 0, List.of(vm.name));
          EvictionFixture.cluster(world.infra(), NS, cluster);
          EvictionFixture.kubeconfigSecret(
              world.infra(), NS, cluster, guestKubeconfigThatMayNotEvict());
          create(vm, cluster, "External", Map.of());
        },
        () -> {
          CoreV1Event forbidden = awaitEvent(world.infra(), vm.ns, vm.name, "GuestAPIForbidden");
          assertEquals("Warning", forbidden.getType());
          assertTrue(
              forbidden.getMessage().contains("create pods/eviction denied"),
              forbidden.getMessage());
          assertDeletedAtTheDeadline(vm, startOf(vm), DRAIN_TIMEOUT);
          assertTrue(
              event(world.infra(), vm.ns, vm.name, "DrainBlocked").isEmpty(),
              "a refusal by RBAC is not a budget's block");
          assertTrue(unschedulable(node(world.guest(), vm.name)), "cordoning was allowed");
          assertEquals(1, running(world.guest(), ns, "web").size(), "the pod was never evicted");
        });
  }

  /** A guest identity that may read and cordon nodes and read pods, but not create evictions. */
  static String guestKubeconfigThatMayNotEvict() throws ApiException {
    String sa = "drainer-without-evictions";
    world.guestApply(
        """
        apiVersion: v1
        kind: ServiceAccount
        metadata: {name: %1$s, namespace: default}
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata: {name: %1$s}
        rules:
        - {apiGroups: [""], resources: [nodes], verbs: [get, list, watch, patch]}
        - {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
        - {apiGroups: [apps], resources: [daemonsets], verbs: [get]}
        - {apiGroups: [policy], resources: [poddisruptionbudgets], verbs: [get, list]}
        - {apiGroups: [""], resources: [events], verbs: [create, patch]}
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata: {name: %1$s}
        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %1$s}
        subjects: [{kind: ServiceAccount, name: %1$s, namespace: default}]
        """
            .formatted(sa));
    io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest issued =
        new CoreV1Api(world.guest().client())
            .createNamespacedServiceAccountToken(
                sa,
                "default",
                new io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest()
                    .spec(
                        new io.kubernetes.client.openapi.models.V1TokenRequestSpec()
                            .expirationSeconds(3600L)
                            .audiences(List.of())))
            .execute();
    return world.guest().kubeconfigWithToken(sa, issued.getStatus().getToken());
  }

  /**
   * Neither the VMI nor a KubeVirt CR sets a strategy: the controller's fallback (None) leaves the
   * VMI to KubeVirt. The admin learns it once, however often the VMI changes.
   */
  static Case noStrategyAnywhereLeavesTheVmiToKubeVirt() {
    Vm vm = new Vm(NS, "vm-nostrategy");
    return new Case(
        "no eviction strategy anywhere: one EvacuationLeftToKubeVirt event, the VMI left alone",
        () -> {
          world.guest().kwokNodes().createNamed(vm.name, Map.of());
          create(vm, TENANT, null, Map.of());
        },
        () -> {
          CoreV1Event told = awaitEvent(world.infra(), vm.ns, vm.name, "EvacuationLeftToKubeVirt");
          assertEquals("Normal", told.getType());
          assertTrue(told.getMessage().contains("evictionStrategy: External"), told.getMessage());
          // More updates of the marked VMI: each is reconciled, none repeats the explanation.
          for (int i = 0; i < 2; i++) {
            world.infraKubectl(
                "-n",
                vm.ns,
                "annotate",
                "--overwrite",
                "vmi",
                vm.name,
                "example.com/touched=" + System.nanoTime());
          }
          sleepUntil(controllerStarted.plus(DRAIN_TIMEOUT).plusSeconds(3));
          List<CoreV1Event> all =
              events(world.infra(), vm.ns, vm.name).stream()
                  .filter(e -> "EvacuationLeftToKubeVirt".equals(e.getReason()))
                  .toList();
          assertEquals(1, all.size());
          assertEquals(
              1,
              all.get(0).getCount() == null ? 1 : all.get(0).getCount(),
              "said once, not per update");
          Map<String, Object> v = get(world.infra(), vm.ns, vm.name).orElseThrow();
          assertFalse(deleting(v), "left to KubeVirt, not deleted");
          assertEquals(Optional.empty(), annotation(v, EvictionAnnotations.DRAIN_START_TIME));
          assertFalse(unschedulable(node(world.guest(), vm.name)));
        });
  }

  // -----------------------------------------------------------------------------------------------
  // Helpers.

  static void create(Vm vm, String cluster, String strategy, Map<String, String> annotations)
      throws Exception {
    create(vm, cluster, strategy, annotations, true);
  }

  /**
   * Creates the VMI (held by the test's finalizer when {@code hold}) and marks it for evacuation.
   */
  static void create(
      Vm vm, String cluster, String strategy, Map<String, String> annotations, boolean hold)
      throws Exception {
    vm.uid = createVmi(vm.ns, vm.name, cluster, strategy, annotations, hold);
    EvictionFixture.evacuate(world.infra(), vm.ns, vm.name, INFRA_NODE);
  }

  /** A CAPK-shaped VMI; {@code cluster} null leaves out the cluster label. Returns its UID. */
  static String createVmi(
      String ns,
      String name,
      String cluster,
      String strategy,
      Map<String, String> annotations,
      boolean hold)
      throws ApiException {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("kubevirt.io/vm", name);
    labels.put("capk.cluster.x-k8s.io/kubevirt-machine-name", name);
    labels.put("capk.cluster.x-k8s.io/kubevirt-machine-namespace", ns);
    labels.put("example.com/keep", "label");
    if (cluster != null) {
      labels.put("cluster.x-k8s.io/cluster-name", cluster);
    }
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("name", name);
    metadata.put("namespace", ns);
    metadata.put("labels", labels);
    metadata.put("annotations", annotations);
    if (hold) {
      metadata.put("finalizers", List.of(HOLD));
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    if (strategy != null) {
      spec.put("evictionStrategy", strategy);
    }
    spec.put(
        "domain",
        Map.of(
            "cpu",
            Map.of("cores", 2),
            "devices",
            Map.of(),
            "resources",
            Map.of("requests", Map.of("memory", "2Gi"))));
    Map<String, Object> vmi =
        Map.of(
            "apiVersion",
            "kubevirt.io/v1",
            "kind",
            "VirtualMachineInstance",
            "metadata",
            metadata,
            "spec",
            spec);
    // create, not apply: no last-applied annotation, the object holds exactly what the case wrote.
    world.infra().kubectl().runOrFail(GSON.toJson(vmi), "create", "-f", "-");
    return EvictionFixture.uid(get(world.infra(), ns, name).orElseThrow());
  }

  /**
   * A guest node named {@code vm} running one pod that its budget never lets go. Returns the guest
   * namespace.
   */
  static String blockedGuestNode(String vm) {
    String ns = guestNamespace("db");
    world.guest().kwokNodes().createNamed(vm, Map.of());
    EvictionFixture.workload(world.guest(), ns, "db", 1, 1, List.of(vm));
    return ns;
  }

  /**
   * A Node that reports Ready once and that no kwok manages: nothing ever finishes a pod's deletion
   * there.
   */
  static void readyNodeWithoutKubelet(String name) throws Exception {
    kubeletlessNodes.add(name);
    EvictionFixture.readyNodeWithoutKubelet(world.guest(), name);
  }

  static synchronized String guestNamespace(String prefix) {
    String ns = unique(prefix);
    guestNamespaces.add(ns);
    return ns;
  }

  /** Bare pods bound to {@code node}, created in parallel. */
  static void createPods(String ns, String node, String prefix, int count, List<String> finalizers)
      throws Exception {
    EvictionFixture.namespaceWithServiceAccount(world.guest(), ns);
    CoreV1Api core = new CoreV1Api(world.guest().client());
    AtomicInteger next = new AtomicInteger();
    ExecutorService creators = Executors.newFixedThreadPool(16);
    try {
      List<CompletableFuture<Void>> all =
          IntStream.range(0, 16)
              .mapToObj(
                  t ->
                      CompletableFuture.runAsync(
                          () -> {
                            for (int i = next.getAndIncrement();
                                i < count;
                                i = next.getAndIncrement()) {
                              V1Pod pod =
                                  new V1Pod()
                                      .metadata(
                                          new V1ObjectMeta()
                                              .name(prefix + "-" + i)
                                              .labels(Map.of("app", prefix))
                                              .finalizers(finalizers))
                                      .spec(
                                          new V1PodSpec()
                                              .nodeName(node)
                                              .terminationGracePeriodSeconds(0L)
                                              .containers(
                                                  List.of(
                                                      new V1Container()
                                                          .name("main")
                                                          .image(prefix + ":fake")))
                                              // The model starts with an empty map here, which the
                                              // API refuses without a RuntimeClass.
                                              .overhead(null));
                              for (int attempt = 1; ; attempt++) {
                                try {
                                  core.createNamespacedPod(ns, pod).execute();
                                  break;
                                } catch (ApiException e) {
                                  if (e.getCode() == 409) {
                                    break;
                                  }
                                  // 403 right after the namespace was made: the ServiceAccount
                                  // admission's cache has not seen
                                  // its default ServiceAccount yet.
                                  if (attempt >= 20) {
                                    throw new IllegalStateException(
                                        "cannot create pod "
                                            + ns
                                            + "/"
                                            + prefix
                                            + "-"
                                            + i
                                            + ": HTTP "
                                            + e.getCode()
                                            + " "
                                            + e.getResponseBody(),
                                        e);
                                  }
                                  try {
                                    Thread.sleep(500);
                                  } catch (InterruptedException ie) {
                                    Thread.currentThread().interrupt();
                                    throw new IllegalStateException(ie);
                                  }
                                }
                              }
                            }
                          },
                          creators))
              .toList();
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
    } finally {
      creators.shutdownNow();
    }
  }

  /** The recorded drain start of the case's VMI (as it was written on it). */
  static Instant startOf(Vm vm) throws Exception {
    Await.until(
        "drain start recorded on " + vm.name,
        WAIT,
        () ->
            get(world.infra(), vm.ns, vm.name)
                .flatMap(v -> annotation(v, EvictionAnnotations.DRAIN_START_TIME))
                .isPresent());
    return OffsetDateTime.parse(
            annotation(
                    get(world.infra(), vm.ns, vm.name).orElseThrow(),
                    EvictionAnnotations.DRAIN_START_TIME)
                .orElseThrow())
        .toInstant();
  }

  /** The hostile start was replaced by a valid one the controller took from its clock. */
  static Instant assertStartReplacedByControllerTime(Vm vm, String hostile) throws Exception {
    Await.until(
        "drain start of " + vm.name + " replaced",
        WAIT,
        () ->
            annotation(
                    get(world.infra(), vm.ns, vm.name).orElseThrow(),
                    EvictionAnnotations.DRAIN_START_TIME)
                .filter(v -> !v.equals(hostile))
                .flatMap(Rfc3339::parse)
                .isPresent());
    Instant start = startOf(vm);
    assertFalse(
        start.isBefore(controllerStarted.minusSeconds(1)),
        "replaced by the controller's now: " + start);
    assertFalse(start.isAfter(Instant.now()), "never in the future: " + start);
    return start;
  }

  /**
   * Deleted by the controller at the deadline: a DrainDeadlinePassed warning, a VMIDeleted event,
   * and a deletion time between the deadline and the deadline + 30 s.
   */
  static void assertDeletedAtTheDeadline(Vm vm, Instant start, Duration timeout) throws Exception {
    Instant deadline = start.plus(timeout);
    Await.until(
        "VMI " + vm.name + " deleted at its deadline " + deadline,
        Duration.between(Instant.now(), deadline).plus(DEADLINE_SLACK).plus(WAIT),
        () -> EvictionFixture.deletedOrDeleting(world.infra(), vm.ns, vm.name, vm.uid));
    CoreV1Event passed = awaitEvent(world.infra(), vm.ns, vm.name, "DrainDeadlinePassed");
    assertEquals("Warning", passed.getType());
    awaitEvent(world.infra(), vm.ns, vm.name, "VMIDeleted");
    Instant deletedAt = deletionTime(vm);
    // Kubernetes times have second precision: the deletion may show in the second the deadline fell
    // in.
    assertFalse(
        deletedAt.isBefore(deadline.minusSeconds(1)),
        "deleted at " + deletedAt + ", before the deadline " + deadline);
    assertFalse(
        deletedAt.isAfter(deadline.plus(DEADLINE_SLACK)),
        "deleted at " + deletedAt + ", after deadline + 30 s " + deadline);
    assertEquals(
        Optional.of(start.toString()),
        annotation(
                get(world.infra(), vm.ns, vm.name).orElseThrow(),
                EvictionAnnotations.DRAIN_START_TIME)
            .map(t -> OffsetDateTime.parse(t).toInstant().toString()),
        "start never moved");
  }

  @SuppressWarnings("unchecked")
  static Instant deletionTime(Vm vm) throws ApiException {
    Map<String, Object> v =
        get(world.infra(), vm.ns, vm.name)
            .orElseThrow(() -> new AssertionError(vm.name + " is gone: hold it"));
    assertEquals(vm.uid, EvictionFixture.uid(v));
    Object ts = ((Map<String, Object>) v.get("metadata")).get("deletionTimestamp");
    assertTrue(ts != null, vm.name + " not being deleted");
    return OffsetDateTime.parse((String) ts).toInstant();
  }

  /** Labels, spec and other annotations as the case wrote them: only the drain start changed. */
  @SuppressWarnings("unchecked")
  static void assertOnlyOurAnnotationChanged(Vm vm, Map<String, String> othersAsWritten)
      throws ApiException {
    Map<String, Object> v = get(world.infra(), vm.ns, vm.name).orElseThrow();
    Map<String, Object> meta = (Map<String, Object>) v.get("metadata");
    Map<String, String> annotations =
        new LinkedHashMap<>((Map<String, String>) meta.get("annotations"));
    annotations.remove(EvictionAnnotations.DRAIN_START_TIME);
    // The phase is ours too, written with the drain start.
    assertEquals("Draining", annotations.remove(EvictionAnnotations.EVACUATION_PHASE));
    assertEquals(othersAsWritten, annotations);
    assertEquals("label", ((Map<String, String>) meta.get("labels")).get("example.com/keep"));
    Map<String, Object> spec = (Map<String, Object>) v.get("spec");
    assertEquals("External", spec.get("evictionStrategy"));
    assertEquals(
        Map.of("cores", 2.0), ((Map<String, Object>) spec.get("domain")).get("cpu"), "spec kept");
  }

  static String secretVersion(String cluster) throws ApiException {
    return new CoreV1Api(world.infra().client())
        .readNamespacedSecret(cluster + "-kubeconfig", NS)
        .execute()
        .getMetadata()
        .getResourceVersion();
  }

  static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  static void sleepUntil(Instant t) throws InterruptedException {
    long ms = Duration.between(Instant.now(), t).toMillis();
    if (ms > 0) {
      Thread.sleep(ms);
    }
  }

  /** RFC 3339 parsing for assertions. */
  static final class Rfc3339 {
    static Optional<Instant> parse(String s) {
      try {
        return Optional.of(OffsetDateTime.parse(s).toInstant());
      } catch (RuntimeException e) {
        return Optional.empty();
      }
    }
  }
}
