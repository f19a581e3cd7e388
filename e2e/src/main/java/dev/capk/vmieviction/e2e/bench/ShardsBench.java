package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Kubectl;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.ControllerServiceAccount;
import dev.capk.vmieviction.e2e.scenario.EvacuationWorld;
import dev.capk.vmieviction.e2e.scenario.ExternalInfraWorld;
import dev.capk.vmieviction.e2e.scenario.InfraCredentials;
import dev.capk.vmieviction.e2e.scenario.InvariantRecorder;
import dev.capk.vmieviction.e2e.scenario.ShardLeaseView;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Benchmark 12 (issue 31, item 3), on request only ({@code -Dbench.only=shards}): the jar as
 * several replicas with {@code --shard-infra-clusters} sharing out several infra clusters; every
 * infra cluster drained with the real {@code kubectl drain}; the replica holding the most infra
 * clusters SIGKILLed mid-drain, as {@code ShardedInfraFailoverE2EIT} does with two of each.
 */
final class ShardsBench extends Bench {
  static final String ID = "bench-shards";
  static final Duration LEASE = Duration.ofSeconds(6);

  /** Each tenant's guest workload: 6 pods under a budget of minAvailable 5. */
  static final int PODS = 6;

  static final int MIN_AVAILABLE = 5;

  /** One infra cluster of the world; {@code uids}: its drained VMIs' UIDs before the drain. */
  private record Site(
      String name,
      LocalCluster infra,
      EvacuationWorld world,
      TenantCluster tenant,
      String user,
      String lease,
      Map<String, String> uids) {
    String node() {
      return world.infraNodes().get(0);
    }

    int vmis() {
      return uids.size() + 1; // and the anchor on the other infra node
    }
  }

  /** One replica: its process and identity, and its figures when last read. */
  private static final class Replica {
    final String name;
    final ControllerProcess process;
    final String identity;
    double cpuAtDrain;
    double cpu;
    long peakRssKb;

    Replica(String name, ControllerProcess process, String identity) {
      this.name = name;
      this.process = process;
      this.identity = identity;
    }

    /** Reads VmHWM and utime+stime (while the process lives). */
    void read() {
      peakRssKb = ControllerProcess.procStatus(process.pid(), "VmHWM:");
      cpu = ControllerProcess.processCpuSeconds(process.pid());
    }
  }

  /** What one drain came to: its kubectl exit, how long it took. */
  private record Drain(int exitCode, double seconds) {}

  private final List<Site> sites = new ArrayList<>();
  private final List<Replica> replicas = new ArrayList<>();
  private final Map<String, InvariantRecorder> recorders = new LinkedHashMap<>();
  private final Map<String, Drain> drains = new LinkedHashMap<>();
  private Map<String, String> ownersBefore = Map.of();
  private Map<String, String> ownersAfter = Map.of();
  private Map<String, String> renewalAtKill = Map.of();
  private Map<String, Integer> inFlightAtKill = Map.of();
  private Replica doomed;
  private Instant drainsStarted;
  private Instant killed;
  private double killedAfter;

  @Override
  void run() throws Exception {
    int infraCount = Integer.getInteger("bench.shards.infraClusters", 6);
    int replicaCount = Integer.getInteger("bench.shards.replicas", 3);
    int vmis = Integer.getInteger("bench.shards.vmis", 8);
    int guestCount = Integer.getInteger("bench.shards.guests", 2);
    String load = BenchMain.loadAverage();
    List<LocalCluster> clusters = startClusters(infraCount, guestCount);
    ExternalInfraWorld world = null;
    try {
      LocalCluster management = clusters.get(0);
      world = ExternalInfraWorld.start(management);
      addSites(
          world,
          clusters.subList(1, 1 + infraCount),
          clusters.subList(1 + infraCount, clusters.size()),
          vmis);
      startReplicas(management, replicaCount);
      failover(management);
      write(management, guestCount, load, BenchMain.loadAverage());
    } finally {
      replicas.forEach(r -> r.process.close());
      recorders.values().forEach(InvariantRecorder::close);
      if (world != null) {
        world.close();
      }
      sites.forEach(s -> EvacuationWorld.stopStandIn(s.infra()));
      clusters.forEach(LocalCluster::close);
    }
  }

  /** The infra identity of infra cluster {@code i}: its audit policy logs all it asks. */
  private static String user(int i) {
    return "shard-bench-infra-" + i;
  }

  /**
   * The management API server alone; infra clusters with every component (the stand-in's launcher
   * pods need the scheduler, kwok and the garbage collector), audited; guest clusters with every
   * component. Started a few at a time: two cores.
   */
  private List<LocalCluster> startClusters(int infraCount, int guestCount) throws Exception {
    progress(
        "shards: a management, %d infra and %d guest clusters, 3 at a time",
        infraCount, guestCount);
    List<LocalCluster.Builder> builders = new ArrayList<>();
    builders.add(LocalCluster.builder("bench-shards-management"));
    for (int i = 1; i <= infraCount; i++) {
      String name = "bench-shards-infra-" + i;
      LocalCluster.Builder b = LocalCluster.builder(name).withAll();
      AuditLog.apiServerFlags(auditDir(), name, infraRules(user(i))).forEach(b::apiServerFlag);
      builders.add(b);
    }
    for (int k = 0; k < guestCount; k++) {
      builders.add(LocalCluster.builder("bench-shards-guest-" + k).withAll());
    }
    List<LocalCluster> out = new ArrayList<>();
    try {
      for (int from = 0; from < builders.size(); from += 3) {
        out.addAll(startAll(builders.subList(from, Math.min(from + 3, builders.size()))));
      }
      return out;
    } catch (Exception e) {
      out.forEach(LocalCluster::close);
      throw e;
    }
  }

  /**
   * Every VMI delete with its body (the UID precondition), and every request of the controller's
   * identity there.
   */
  private static String infraRules(String user) {
    return """
        - level: Request
          verbs: ["delete"]
          resources: [{group: "kubevirt.io", resources: ["virtualmachineinstances"]}]
        - level: Metadata
          users: ["%s"]
        """
        .formatted(user);
  }

  /** One tenant per infra cluster; tenants share the guest clusters round the table. */
  private void addSites(
      ExternalInfraWorld world, List<LocalCluster> infras, List<LocalCluster> guests, int vmis)
      throws Exception {
    List<EvacuationWorld> worlds = new ArrayList<>();
    for (int i = 0; i < infras.size(); i++) {
      worlds.add(world.addInfraCluster(infras.get(i), "s" + (i + 1), 2)); // one stand-in each
    }
    Site[] out = new Site[infras.size()];
    long t0 = System.nanoTime();
    parallel(
        infras.size(),
        infras.size(),
        i -> out[i] = site(world, worlds.get(i), guests.get(i % guests.size()), i + 1, vmis));
    sites.addAll(List.of(out));
    progress(
        "shards: %d infra clusters of %d VMIs set up in %.0f s",
        out.length, vmis + 1, secondsSince(t0));
  }

  /**
   * Infra cluster {@code i}: its identity (config/infra-rbac's roles), a tenant whose {@code vmis}
   * VMIs run on the node to drain and one more on the other node, and its guest workload.
   */
  private static Site site(
      ExternalInfraWorld world, EvacuationWorld w, LocalCluster guest, int i, int vmis) {
    String ns = w.prefix() + "-t";
    LocalCluster infra = (LocalCluster) w.infra();
    String credentials = InfraCredentials.grant(infra, user(i), List.of(ns));
    TenantCluster t = world.addTenant(w, "t", guest, credentials);
    String[] names = IntStream.range(0, vmis).mapToObj(k -> ns + "-" + k).toArray(String[]::new);
    w.addVmsOn(w.infraNodes().get(0), t, "External", names);
    w.addVmsOn(w.infraNodes().get(1), t, "External", ns + "-anchor");
    t.deployProtectedWorkload(w.prefix(), "web", PODS, MIN_AVAILABLE);
    t.awaitAvailable(w.prefix(), "web", PODS);
    Map<String, String> uids = new LinkedHashMap<>();
    for (String n : names) {
      uids.put(n, w.vmiUid(t, n));
    }
    String lease = ShardLeaseView.name(ID, credentials);
    return new Site("infra-" + i, infra, w, t, user(i), lease, uids);
  }

  /**
   * The replicas, as the controller's ServiceAccount with config/default's RBAC, with the e2e
   * test's short leader-election durations; then until every infra cluster is held and the Leases
   * are balanced, and the start-up wave went quiet.
   */
  private void startReplicas(LocalCluster management, int count) throws Exception {
    Path kubeconfig = ControllerServiceAccount.install(management);
    List<String> flags = ShardLeaseView.replicaFlags(kubeconfig, ID, LEASE);
    for (int r = 1; r <= count; r++) {
      ControllerProcess p = ControllerJar.start("shards-" + r, work, flags, Duration.ofMinutes(2));
      Await.until(
          "replica " + r + "'s shard leases", Duration.ofSeconds(60), () -> !id(p).isEmpty());
      replicas.add(new Replica("replica " + r, p, id(p)));
    }
    int share = (sites.size() + count - 1) / count;
    Await.until(
        "every infra cluster held, at most " + share + " per replica",
        Duration.ofMinutes(3),
        () -> {
          Map<String, String> owners = owners(management);
          Set<String> ids = replicas.stream().map(x -> x.identity).collect(Collectors.toSet());
          return ids.containsAll(owners.values())
              && owners.size() == sites.size()
              && ids.stream().allMatch(x -> held(owners, x).size() <= share);
        });
    AuditLog.awaitQuiet(auditDir(), sites.stream().map(Site::infra).toList());
    progress("shards: %d replicas hold %s", count, owners(management));
  }

  private static String id(ControllerProcess p) {
    return ShardLeaseView.identity(p);
  }

  /** Each infra cluster's holder by site name; absent: none. */
  private Map<String, String> owners(LocalCluster management) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Site s : sites) {
      String holder = ShardLeaseView.read(management, s.lease()).holder();
      if (!holder.isBlank()) {
        out.put(s.name(), holder);
      }
    }
    return out;
  }

  private static List<String> held(Map<String, String> owners, String identity) {
    return owners.entrySet().stream()
        .filter(e -> e.getValue().equals(identity))
        .map(Map.Entry::getKey)
        .sorted()
        .toList();
  }

  /**
   * Drains every infra cluster's node at once; once each infra cluster of the replica holding the
   * most has an evacuation started, SIGKILLs that replica; then waits for the others to take its
   * infra clusters over, for every drain, and for the evacuations' outcomes.
   */
  private void failover(LocalCluster management) throws Exception {
    ownersBefore = owners(management);
    doomed =
        replicas.stream()
            .max(Comparator.comparingInt(r -> held(ownersBefore, r.identity).size()))
            .orElseThrow();
    List<Site> doomedSites =
        sites.stream().filter(s -> doomed.identity.equals(ownersBefore.get(s.name()))).toList();
    for (Site s : sites) {
      InvariantRecorder r = new InvariantRecorder(s.infra(), List.of(s.tenant()));
      r.startTrackingAvailability();
      recorders.put(s.name(), r);
    }
    replicas.forEach(r -> r.cpuAtDrain = ControllerProcess.processCpuSeconds(r.process.pid()));
    ExecutorService pool = Executors.newFixedThreadPool(sites.size());
    try {
      drainsStarted = Instant.now();
      progress("shards: draining %d infra nodes; %s to die", sites.size(), doomed.name);
      Map<String, Future<Drain>> running = new LinkedHashMap<>();
      for (Site s : sites) {
        running.put(s.name(), pool.submit(() -> drain(s)));
      }
      Await.until(
          "an evacuation started on each infra cluster of " + doomed.name,
          Duration.ofMinutes(3),
          () -> {
            for (Site s : doomedSites) {
              if (marked(s).isEmpty()) {
                return false;
              }
            }
            return true;
          });
      kill(management, doomedSites);
      Await.until(
          "the others to hold every infra cluster",
          Duration.ofMinutes(2),
          () -> {
            Map<String, String> o = owners(management);
            return o.size() == sites.size() && !o.containsValue(doomed.identity);
          });
      for (var e : running.entrySet()) {
        drains.put(e.getKey(), e.getValue().get(10, TimeUnit.MINUTES));
      }
    } finally {
      pool.shutdownNow();
    }
    awaitOutcomes();
    ownersAfter = owners(management);
    replicas.stream().filter(r -> r != doomed).forEach(Replica::read);
  }

  private Drain drain(Site s) {
    long t0 = System.nanoTime();
    Kubectl.Result r = s.world().drainInfraNode(s.node(), Duration.ofMinutes(8));
    if (r.exitCode() != 0) {
      progress("shards: drain of %s failed: %s", s.name(), r.stderr().strip());
    }
    return new Drain(r.exitCode(), secondsSince(t0));
  }

  /** The drained VMIs (original UIDs) that carry a drain start and are not deleted. */
  private static List<String> marked(Site s) throws IOException {
    String path = "/apis/kubevirt.io/v1/namespaces/" + s.tenant().namespace();
    return new RawKube(s.infra())
        .items(path + "/virtualmachineinstances").stream()
            .filter(v -> s.uids().containsValue(RawKube.str(v, "metadata", "uid")))
            .filter(v -> RawKube.str(v, "metadata", "deletionTimestamp") == null)
            .filter(
                v ->
                    RawKube.str(
                            v, "metadata", "annotations", InvariantRecorder.DRAIN_START_ANNOTATION)
                        != null)
            .map(v -> RawKube.str(v, "metadata", "name"))
            .toList();
  }

  /** SIGKILL, then the doomed infra clusters' Leases as left (their last renewal). */
  private void kill(LocalCluster management, List<Site> doomedSites) throws Exception {
    doomed.read();
    doomed.process.kill();
    killed = Instant.now();
    killedAfter = AuditLog.epoch(killed) - AuditLog.epoch(drainsStarted);
    Map<String, String> renewals = new LinkedHashMap<>();
    Map<String, Integer> inFlight = new LinkedHashMap<>();
    for (Site s : doomedSites) {
      renewals.put(s.name(), ShardLeaseView.read(management, s.lease()).renewTime());
      inFlight.put(s.name(), marked(s).size());
    }
    renewalAtKill = renewals;
    inFlightAtKill = inFlight;
    progress("shards: %s killed; in flight on its infra clusters: %s", doomed.name, inFlight);
  }

  /** Each drained VMI's deletion checked by its recorder, and recreated (at most 3 minutes). */
  private void awaitOutcomes() throws Exception {
    long t0 = System.nanoTime();
    for (Site s : sites) {
      InvariantRecorder r = recorders.get(s.name());
      while (secondsSince(t0) < 180
          && !(s.uids().values().stream().allMatch(u -> r.drainCheck(u) != null)
              && recreated(s).size() == s.uids().size())) {
        Thread.sleep(1000);
      }
    }
    AuditLog.awaitQuiet(auditDir(), sites.stream().map(Site::infra).toList());
  }

  /** The drained VMIs that exist again under a new UID, by name. */
  private static Set<String> recreated(Site s) throws IOException {
    String path = "/apis/kubevirt.io/v1/namespaces/" + s.tenant().namespace();
    Map<String, String> now = new LinkedHashMap<>();
    for (var v : new RawKube(s.infra()).items(path + "/virtualmachineinstances")) {
      now.put(RawKube.str(v, "metadata", "name"), RawKube.str(v, "metadata", "uid"));
    }
    return s.uids().entrySet().stream()
        .filter(e -> now.get(e.getKey()) != null && !now.get(e.getKey()).equals(e.getValue()))
        .map(Map.Entry::getKey)
        .collect(Collectors.toSet());
  }

  /** One infra cluster's evacuations, from its recorder and its API server's audit log. */
  private record Outcome(
      int drained,
      int completed,
      int oneStart,
      int resumed,
      int deletes,
      int withPrecondition,
      int twice,
      int others,
      int minAvailable,
      int requests) {}

  private Outcome outcome(Site s) throws Exception {
    InvariantRecorder r = recorders.get(s.name());
    String ns = s.tenant().namespace();
    List<AuditLog.VmiDelete> deletes = deletes(s);
    List<AuditLog.VmiDelete> ours =
        deletes.stream().filter(d -> s.user().equals(d.user()) && d.succeeded()).toList();
    Set<String> recreated = recreated(s);
    int completed = 0;
    int oneStart = 0;
    int resumed = 0;
    for (var e : s.uids().entrySet()) {
      var check = r.drainCheck(e.getValue());
      Set<String> starts = r.drainStarts(ns, e.getKey());
      boolean single = starts.size() == 1;
      oneStart += single ? 1 : 0;
      completed +=
          check != null
                  && check.drained()
                  && r.deletions(e.getValue()) == 1
                  && single
                  && recreated.contains(e.getKey())
              ? 1
              : 0;
      boolean deletedAfterKill =
          ours.stream().anyMatch(d -> d.name().equals(e.getKey()) && d.received().isAfter(killed));
      resumed += single && before(starts.iterator().next(), killed) && deletedAfterKill ? 1 : 0;
    }
    Map<String, Long> perVmi =
        ours.stream()
            .collect(Collectors.groupingBy(AuditLog.VmiDelete::name, Collectors.counting()));
    return new Outcome(
        s.uids().size(),
        completed,
        oneStart,
        resumed,
        ours.size(),
        (int)
            ours.stream()
                .filter(d -> s.uids().get(d.name()) != null)
                .filter(d -> s.uids().get(d.name()).equals(d.preconditionUid()))
                .count(),
        (int) perVmi.values().stream().filter(c -> c > 1).count(),
        (int) deletes.stream().filter(d -> !s.user().equals(d.user())).count(),
        r.minAvailable(s.tenant(), s.world().prefix(), "web"),
        (int) deletes.stream().filter(d -> s.user().equals(d.user())).count());
  }

  /** The VMI delete requests on {@code s}'s tenant namespace since the drains began. */
  private List<AuditLog.VmiDelete> deletes(Site s) {
    return AuditLog.vmiDeletes(AuditLog.logOf(auditDir(), s.infra().name())).stream()
        .filter(d -> !d.received().isBefore(drainsStarted))
        .filter(d -> s.tenant().namespace().equals(d.namespace()))
        .toList();
  }

  /**
   * The VMI deletes that succeeded, sent by {@code r}: by the holder of the infra cluster at the
   * time, before the kill as the Leases were before it, after it as they were after.
   */
  private long deletesBy(Replica r) {
    long n = 0;
    for (Site s : sites) {
      for (AuditLog.VmiDelete d : deletes(s)) {
        Map<String, String> owners = d.received().isBefore(killed) ? ownersBefore : ownersAfter;
        if (d.succeeded() && s.user().equals(d.user()) && r.identity.equals(owners.get(s.name()))) {
          n++;
        }
      }
    }
    return n;
  }

  /** Whether RFC 3339 time {@code t} is before {@code instant}; false if unreadable. */
  private static boolean before(String t, Instant instant) {
    try {
      return OffsetDateTime.parse(t).toInstant().isBefore(instant);
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Seconds from RFC 3339 time {@code a} to {@code b}; NaN if {@code a} is unreadable. */
  private static double between(String a, Instant b) {
    try {
      return AuditLog.epoch(b) - AuditLog.epoch(OffsetDateTime.parse(a).toInstant());
    } catch (RuntimeException e) {
      return Double.NaN;
    }
  }

  /**
   * Takeover of a doomed infra cluster: from the killed replica's last renewal to the new holder's
   * Lease acquisition, first request and first write (not GET, LIST or WATCH) on the infra cluster,
   * the audit log's first after the kill.
   */
  private List<String> takeover(LocalCluster management, Site s) {
    String renewal = renewalAtKill.get(s.name());
    ShardLeaseView.Lease now = ShardLeaseView.read(management, s.lease());
    List<AuditLog.Entry> after =
        AuditLog.entries(AuditLog.logOf(auditDir(), s.infra().name())).stream()
            .filter(e -> s.user().equals(e.user()) && e.received().isAfter(killed))
            .toList();
    Instant first =
        after.stream().map(AuditLog.Entry::received).min(Instant::compareTo).orElse(null);
    Instant write =
        after.stream()
            .filter(e -> !Set.of("get", "list", "watch").contains(e.verb()))
            .map(AuditLog.Entry::received)
            .min(Instant::compareTo)
            .orElse(null);
    double acquired;
    try {
      acquired = between(renewal, OffsetDateTime.parse(now.acquireTime()).toInstant());
    } catch (RuntimeException e) {
      acquired = Double.NaN;
    }
    return Report.row(
        s.name(),
        replicaName(ownersBefore.get(s.name())) + " → " + replicaName(now.holder()),
        inFlightAtKill.get(s.name()),
        Report.f("%.2f", acquired),
        first == null ? "none" : Report.f("%.2f", between(renewal, first)),
        write == null ? "none" : Report.f("%.2f", between(renewal, write)));
  }

  private String replicaName(String identity) {
    return replicas.stream()
        .filter(r -> r.identity.equals(identity))
        .map(r -> r.name)
        .findFirst()
        .orElse(identity == null || identity.isBlank() ? "none" : identity);
  }

  private void write(LocalCluster management, int guests, String loadStart, String loadEnd)
      throws Exception {
    List<List<String>> rows = new ArrayList<>();
    int[] sum = new int[10];
    for (Site s : sites) {
      Outcome o = outcome(s);
      Drain d = drains.get(s.name());
      int[] v = {
        o.drained(),
        o.completed(),
        o.oneStart(),
        o.resumed(),
        o.deletes(),
        o.withPrecondition(),
        o.twice(),
        o.others(),
        o.minAvailable() >= MIN_AVAILABLE ? 0 : 1,
        o.requests()
      };
      IntStream.range(0, v.length).forEach(k -> sum[k] += v[k]);
      rows.add(
          Report.row(
              s.name(),
              replicaName(ownersBefore.get(s.name()))
                  + " → "
                  + replicaName(ownersAfter.get(s.name())),
              o.drained(),
              o.completed(),
              o.oneStart(),
              inFlightAtKill.containsKey(s.name()) ? o.resumed() : "–",
              o.requests() + " / " + o.deletes() + " / " + o.withPrecondition(),
              o.twice(),
              o.others(),
              o.minAvailable(),
              d.exitCode() + ", " + Report.f("%.0f s", d.seconds())));
    }
    List<List<String>> takeovers = new ArrayList<>();
    for (Site s : sites) {
      if (renewalAtKill.containsKey(s.name())) {
        takeovers.add(takeover(management, s));
      }
    }
    verdicts(sum, takeovers);
    report.section(
        describe(guests, loadStart, loadEnd)
            + Report.table(
                "replica|infra clusters before the kill|after|VMIs owned before / after"
                    + "|peak RSS MiB (VmHWM)|CPU s, start to end (or kill)|of which since the drains began"
                    + "|VMIs it deleted",
                footprint())
            + "\n"
            + Report.table(
                "infra cluster taken over|from → to|evacuations in flight at the kill"
                    + "|last renewal → Lease acquired s|→ first request on the infra cluster s"
                    + "|→ first write on the infra cluster s",
                takeovers)
            + "\n"
            + Report.table(
                "infra cluster|holder before → after|VMIs drained|evacuations completed"
                    + "|one drain start ever|resumed after the kill with the start from before it"
                    + "|VMI delete requests of its identity / succeeded / with the original UID"
                    + " as precondition"
                    + "|VMIs deleted more than once|deletes by anyone else"
                    + "|fewest guest pods available (budget: 5)|kubectl drain exit, time",
                rows));
  }

  private void verdicts(int[] sum, List<List<String>> takeovers) {
    String what = "12. sharded infra, a replica SIGKILLed mid-drain: ";
    report.verdict(
        what + "evacuations completed",
        sum[1] + " / " + sum[0],
        "all",
        sum[1] == sum[0] && sum[0] > 0);
    report.verdict(
        what + "VMIs deleted more than once",
        Report.f(
            "%d (delete requests %d, succeeded %d, with the original UID as precondition %d)",
            sum[6], sum[9], sum[4], sum[5]),
        "none, each with its UID",
        sum[6] == 0 && sum[4] == sum[0] && sum[5] == sum[4]);
    report.verdict(what + "budgets broken", sum[8] + " of " + sites.size(), "none", sum[8] == 0);
    report.measured(
        what + "last renewal → Lease acquired",
        takeovers.stream().map(r -> r.get(3) + " s").collect(Collectors.joining(", ")));
  }

  private List<List<String>> footprint() {
    List<List<String>> rows = new ArrayList<>();
    for (Replica r : replicas) {
      List<String> before = held(ownersBefore, r.identity);
      List<String> after = r == doomed ? List.of() : held(ownersAfter, r.identity);
      rows.add(
          Report.row(
              r.name + (r == doomed ? " (killed)" : ""),
              String.join(", ", before),
              r == doomed ? "– (killed)" : String.join(", ", after),
              vmisOf(before) + " / " + (r == doomed ? "–" : vmisOf(after)),
              r.peakRssKb / 1024,
              Report.f("%.1f", r.cpu),
              Report.f("%.1f", r.cpu - r.cpuAtDrain),
              deletesBy(r)));
    }
    return rows;
  }

  private int vmisOf(List<String> names) {
    return sites.stream().filter(s -> names.contains(s.name())).mapToInt(Site::vmis).sum();
  }

  private String describe(int guests, String loadStart, String loadEnd) {
    Site first = sites.get(0);
    return Report.f(
        "## 12. Infra clusters shared out across replicas, one killed mid-drain\n\n"
            + "On request only (`-Dbench.only=shards`). %d replicas of the jar (`%s`), each "
            + "`--infra-clusters=external --shard-infra-clusters`, lease %d s, renew deadline 4 s, retry "
            + "period 1 s, as the controller's ServiceAccount with config/default's RBAC, against a "
            + "management API server. %d infra clusters (API server, controller manager, scheduler, kwok, "
            + "the KubeVirt stand-in), each with its own identity bound to config/infra-rbac (its audit "
            + "log records every request of that identity, and every VMI delete with its body); one tenant "
            + "per infra cluster with %d VMIs on the node drained and one on the other; the tenants share "
            + "%d guest clusters, each tenant with a Deployment of %d pods under a budget of minAvailable "
            + "%d. Every infra node drained at once with the real `kubectl drain`; once each infra cluster "
            + "of the replica holding the most had an evacuation started, that replica was SIGKILLed (here "
            + "%.1f s after the drains began). "
            + "Peak RSS is VmHWM, CPU utime+stime of /proc/PID/stat, read just before the kill for the "
            + "killed replica and after every evacuation for the others. Takeover times are from the "
            + "Lease's renewTime as the killed replica left it. \"Completed\": deleted exactly once "
            + "(its guest node drained first), one drain start ever seen, and recreated. Load average "
            + "at the start %s, at the end %s.\n\n",
        replicas.size(),
        ControllerJar.describeDeployed(),
        LEASE.toSeconds(),
        sites.size(),
        first.uids().size(),
        guests,
        PODS,
        MIN_AVAILABLE,
        killedAfter,
        loadStart,
        loadEnd);
  }
}
