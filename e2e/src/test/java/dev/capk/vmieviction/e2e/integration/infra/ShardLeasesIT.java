package dev.capk.vmieviction.e2e.integration.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.TricklingProxy;
import dev.capk.vmieviction.shards.ShardLeases;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1Lease;
import io.kubernetes.client.util.Config;
import java.io.StringReader;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ShardLeases} on a real API server: three replicas (three identities in this JVM, each with
 * its own client) share out six infra cluster keys through Leases alone. Throughout every test a
 * sampler checks that no key is ever held by two replicas at once. Short lease durations (3 s,
 * renew deadline 2 s, a pass every 300 ms).
 */
class ShardLeasesIT {

  @RegisterExtension
  static final LocalClusterExtension managementExt =
      LocalClusterExtension.shared("shards-management", b -> b);

  static final Duration LEASE = Duration.ofSeconds(3);
  static final Duration WAIT = Duration.ofSeconds(60);
  static final Set<String> KEYS =
      IntStream.range(0, 6)
          .mapToObj(i -> "00c1a55e" + Integer.toHexString(0x10000000 + i * 7919))
          .collect(Collectors.toCollection(TreeSet::new));

  LocalCluster management;
  String namespace;
  String prefix;
  final List<Replica> replicas = new ArrayList<>();
  final List<AutoCloseable> closeLast = new ArrayList<>();
  final List<String> overlaps = new CopyOnWriteArrayList<>();
  Thread sampler;

  /**
   * One replica: its Leases, and what it runs (as the controller: the keys held when last told, a
   * key stopped before its Lease may be given back).
   */
  static final class Replica {
    final String identity;
    final ShardLeases leases;
    volatile Set<String> running = Set.of();

    Replica(String identity, ApiClient client, ShardLeases.Settings settings) {
      this.identity = identity;
      this.leases =
          new ShardLeases(client, settings, () -> running = held(), k -> running.contains(k));
    }

    Set<String> held() {
      return leases.held();
    }

    /** As the controller stops: its pipelines first, then its Leases. */
    void stop() {
      running = Set.of();
      leases.close();
    }
  }

  @BeforeEach
  void setUp() {
    management = managementExt.cluster();
    String suffix = Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    namespace = "shards-" + suffix;
    prefix = "vmi-eviction-" + suffix;
    management
        .kubectl()
        .apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n".formatted(namespace));
    sampler =
        Thread.ofPlatform()
            .daemon()
            .name("shard-overlap-sampler")
            .start(
                () -> {
                  while (!Thread.currentThread().isInterrupted()) {
                    Map<String, String> holders = new HashMap<>();
                    for (Replica r : List.copyOf(replicas)) {
                      for (String k : r.held()) {
                        String other = holders.putIfAbsent(k, r.identity);
                        if (other != null) {
                          overlaps.add(k + " held by " + other + " and " + r.identity);
                        }
                      }
                    }
                    try {
                      Thread.sleep(10);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                });
  }

  @AfterEach
  void tearDown() throws Exception {
    sampler.interrupt();
    sampler.join();
    for (Replica r : replicas) {
      r.stop();
    }
    for (AutoCloseable c : closeLast) {
      c.close();
    }
    assertEquals(List.of(), overlaps, "a key held by two replicas at once");
  }

  @Test
  void threeReplicasHoldEachOfSixInfraClustersExactlyOnceAtMostTwoEachAsTheirLeasesSay()
      throws Exception {
    // One alone first: it holds all six, then gives four back as the others join.
    Replica first = start("replica-a", management.serverUrl());
    Await.until("one replica holds all six", WAIT, () -> first.held().equals(KEYS));
    start("replica-b", management.serverUrl());
    start("replica-c", management.serverUrl());

    awaitShared(replicas);
    Map<String, String> holders = leaseHolders();
    for (Replica r : replicas) {
      for (String k : r.held()) {
        assertEquals(r.identity, holders.get(k), "the Lease of " + k + " names its holder");
      }
    }
    assertEquals(3, members().size(), "one membership Lease per replica");
  }

  @Test
  void aReplicaThatCanNoLongerRenewStopsItsInfraClustersAndTheOthersTakeThemAfterExpiry()
      throws Exception {
    TricklingProxy cut =
        TricklingProxy.start(URI.create(management.serverUrl()).getPort(), Duration.ofHours(1));
    closeLast.add(cut);
    Replica doomed = start("replica-doomed", cut.url());
    start("replica-b", management.serverUrl());
    start("replica-c", management.serverUrl());
    awaitShared(replicas);
    Set<String> lost = doomed.held();
    assertTrue(!lost.isEmpty(), "the scenario: the doomed replica holds some");

    // From now on none of its requests is ever answered: as a replica killed, or cut off.
    cut.arm();
    Await.until("the doomed replica stops holding", WAIT, () -> doomed.held().isEmpty());
    List<Replica> survivors = replicas.subList(1, 3);
    awaitShared(survivors);
    Map<String, String> holders = leaseHolders();
    for (String k : lost) {
      assertTrue(
          Set.of("replica-b", "replica-c").contains(holders.get(k)),
          k + " taken over, its Lease says: " + holders.get(k));
    }
  }

  @Test
  void aCleanStopGivesItsInfraClustersBackAtOnceWithoutWaitingForExpiry() throws Exception {
    // A minute-long lease: a takeover within the wait below cannot have come from expiry.
    Duration longLease = Duration.ofSeconds(60);
    Replica leaving = start("replica-leaving", management.serverUrl(), longLease);
    start("replica-b", management.serverUrl(), longLease);
    start("replica-c", management.serverUrl(), longLease);
    awaitShared(replicas);
    assertTrue(!leaving.held().isEmpty(), "the scenario: the leaving replica holds some");

    leaving.stop();
    List<Replica> survivors = replicas.subList(1, 3);
    awaitShared(survivors, Duration.ofSeconds(20));
    assertEquals(2, members().size(), "its membership Lease deleted");
  }

  @Test
  void aReplicaNeverToldWhichInfraClustersExistIsNoMemberAndIsGivenNone() throws Exception {
    // As a replica whose management caches never sync: its controller never gets to say.
    Replica mute = start("replica-mute", management.serverUrl(), LEASE, false);
    start("replica-b", management.serverUrl());
    start("replica-c", management.serverUrl());
    awaitShared(replicas.subList(1, 3));
    assertEquals(Set.of(), mute.held());
    assertEquals(2, members().size(), "no membership Lease for the mute replica");
  }

  @Test
  void theLeaseOfAnInfraClusterNoLongerWantedIsGivenBackThenDeleted() throws Exception {
    Replica only = start("replica-a", management.serverUrl());
    Await.until("one replica holds all six", WAIT, () -> only.held().equals(KEYS));
    String gone = KEYS.iterator().next();
    Set<String> left = new TreeSet<>(KEYS);
    left.remove(gone);

    only.leases.want(left);
    Await.until(
        "the gone infra cluster's Lease deleted", WAIT, () -> !leaseHolders().containsKey(gone));
    assertEquals(left, only.held());
    assertEquals(left, leaseHolders().keySet(), "the other Leases kept");
  }

  // ---------------------------------------------------------------------------------------------

  Replica start(String identity, String server) throws Exception {
    return start(identity, server, LEASE);
  }

  Replica start(String identity, String server, Duration lease) throws Exception {
    return start(identity, server, lease, true);
  }

  Replica start(String identity, String server, Duration lease, boolean told) throws Exception {
    String kubeconfig = management.adminKubeconfigYaml().replace(management.serverUrl(), server);
    ApiClient client = Config.fromConfig(new StringReader(kubeconfig));
    client.setReadTimeout(10_000);
    ShardLeases.Settings settings =
        new ShardLeases.Settings(
            namespace,
            prefix,
            identity,
            lease,
            lease.multipliedBy(2).dividedBy(3),
            Duration.ofMillis(300));
    Replica r = new Replica(identity, client, settings);
    replicas.add(r);
    r.leases.start();
    if (told) {
      r.leases.want(KEYS);
    }
    return r;
  }

  /** Every key held by exactly one of {@code among}, none holding more than ceil(6 / n). */
  void awaitShared(List<Replica> among) {
    awaitShared(among, WAIT);
  }

  void awaitShared(List<Replica> among, Duration timeout) {
    int room = (KEYS.size() + among.size() - 1) / among.size();
    Await.until(
        "six keys shared out among " + among.size(),
        timeout,
        () -> {
          List<String> all = new ArrayList<>();
          for (Replica r : among) {
            Set<String> held = r.held();
            if (held.size() > room) {
              return false;
            }
            all.addAll(held);
          }
          return all.size() == KEYS.size() && KEYS.equals(new TreeSet<>(all));
        });
    for (Replica r : among) {
      assertTrue(r.held().size() <= room, r.identity + " holds " + r.held());
    }
  }

  Map<String, String> leaseHolders() throws ApiException {
    Map<String, String> out = new HashMap<>();
    for (V1Lease l : leases("shard")) {
      out.put(
          l.getMetadata().getLabels().get(ShardLeases.SHARD_LABEL),
          l.getSpec().getHolderIdentity());
    }
    return out;
  }

  List<V1Lease> members() throws ApiException {
    return leases("member");
  }

  List<V1Lease> leases(String role) throws ApiException {
    return new CoordinationV1Api(management.client())
        .listNamespacedLease(namespace)
        .labelSelector(
            ShardLeases.GROUP_LABEL + "=" + prefix + "," + ShardLeases.ROLE_LABEL + "=" + role)
        .execute()
        .getItems();
  }
}
