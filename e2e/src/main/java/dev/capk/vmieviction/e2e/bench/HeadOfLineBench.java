package dev.capk.vmieviction.e2e.bench;

import static dev.capk.vmieviction.api.EvictionAnnotations.DRAIN_START_TIME;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.scenario.ControllerProcess;
import dev.capk.vmieviction.e2e.scenario.TenantCluster;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;
import java.util.stream.IntStream;

/** Head-of-line blocking (issue 14): free VMIs' evacuations alone and among blocked ones. */
final class HeadOfLineBench extends Bench {
  static final String INFRA_NODE = "hol-infra-0";
  static final String INFRA_CLUSTER = "bench-hol-infra";
  static final String GUEST_CLUSTER = "bench-hol-guest-";
  static final String GUEST_NAMESPACE = "hol";
  static final String RECONCILE_HISTOGRAM = "vmi_eviction_reconcile_duration_seconds";
  static final String RECONCILE_MAX_GAUGE = "vmi_eviction_reconcile_duration_max_seconds";
  private static final int FREE_PODS = 3;
  private static final int BLOCKED_PODS = 2;
  private static final String S = "%.2f";
  private static final String[] MEDIAN_P95_MAX = {"median", "p95", "max"};

  enum Kind {
    WARMUP,
    ALONE,
    FREE,
    BLOCKED
  }

  /** One VM: its tenant, VMI name (also its guest node's name) and what its guest node holds. */
  record Vm(int tenant, String name, Kind kind) {
    String ns() {
      return "hol-t" + tenant;
    }

    int pods() {
      return kind == Kind.BLOCKED ? BLOCKED_PODS : FREE_PODS;
    }
  }

  private final List<Vm> vms = new ArrayList<>();

  /** By VMI name, when (nanoTime) this JVM's watch saw the VMI deleted: what the waits wait on. */
  private final Map<String, Long> deletedAt = new ConcurrentHashMap<>();

  /** The drain start annotation last seen on each VMI before its deletion. */
  private final Map<String, String> drainStart = new ConcurrentHashMap<>();

  private final AtomicInteger vmiWatchResumes = new AtomicInteger();

  /**
   * Phase 2's samples every 250 ms: epoch seconds, then CPU seconds of the machine (all cores), the
   * controller, the clusters' processes and this JVM, then the controller's RSS; a window found
   * only afterwards (from the audit logs) is cut out of them.
   */
  private final List<double[]> samples = new CopyOnWriteArrayList<>();

  /** A guest round trip (a small LIST, the guests in turn) each second of phase 2, in ms. */
  private final List<Double> roundTripsMs = new CopyOnWriteArrayList<>();

  private RawKube infraApi;
  private List<LocalCluster> guests;
  private List<RawKube> guestApis;
  private Duration drainTimeout;
  private Duration lateCap;
  private double markingSeconds;
  private String metricsText = "";

  @Override
  void run() throws Exception {
    int tenants = Integer.getInteger("bench.hol.tenants", 4);
    int freeCount = Integer.getInteger("bench.hol.free", 20);
    int blockedCount = Integer.getInteger("bench.hol.blocked", 200);
    drainTimeout = Duration.ofSeconds(Integer.getInteger("bench.hol.drainTimeoutSeconds", 180));
    lateCap = Duration.ofSeconds(Integer.getInteger("bench.hol.lateCapSeconds", 240));
    for (int k = 0; k < tenants; k++) {
      vms.add(new Vm(k, Report.f("hol-t%d-warmup", k), Kind.WARMUP));
    }
    for (int i = 0; i < freeCount; i++) {
      vms.add(new Vm(i % tenants, Report.f("hol-t%d-alone-%02d", i % tenants, i), Kind.ALONE));
      vms.add(new Vm(i % tenants, Report.f("hol-t%d-free-%02d", i % tenants, i), Kind.FREE));
    }
    for (int i = 0; i < blockedCount; i++) {
      vms.add(new Vm(i % tenants, Report.f("hol-t%d-blocked-%03d", i % tenants, i), Kind.BLOCKED));
    }
    // The API servers log just the requests timed here.
    List<LocalCluster> clusters =
        startClusters("hol", tenants, AuditLog.INFRA_RULES, AuditLog.GUEST_RULES, false);
    LocalCluster infra = clusters.get(0);
    guests = clusters.subList(1, clusters.size());
    List<AutoCloseable> watches = new ArrayList<>();
    try {
      Crds.installTestCrds(infra);
      infraApi = new RawKube(infra);
      guestApis = guests.stream().map(RawKube::new).toList();
      for (int k = 0; k < tenants; k++) {
        TenantCluster.create(infra, guests.get(k), "hol-t" + k, "hol-t" + k);
        // No kube-controller-manager here to create the default ServiceAccount pods need.
        guestApis.get(k).createNamespace(GUEST_NAMESPACE, true);
      }
      progress("headofline: creating %d VMIs, their guest nodes and pods", vms.size());
      long t0 = System.nanoTime();
      parallel(vms.size(), 16, i -> createVm(vms.get(i)));
      String running =
          "/api/v1/namespaces/" + GUEST_NAMESPACE + "/pods?fieldSelector=status.phase%3DRunning";
      for (int k = 0; k < tenants; k++) {
        int tenant = k;
        long expected = vms.stream().filter(v -> v.tenant() == tenant).mapToLong(Vm::pods).sum();
        Await.until(
            expected + " running pods in guest " + k,
            Duration.ofMinutes(3),
            () -> guestApis.get(tenant).items(running).size() == expected);
      }
      progress("headofline: world ready in %.0f s", secondsSince(t0));
      watches.add(
          infraApi.watchResuming(
              "/apis/kubevirt.io/v1/virtualmachineinstances",
              (type, vmi) -> {
                // Also notes the drain start each VMI shows before its deletion.
                String name = RawKube.str(vmi, "metadata", "name");
                String start = RawKube.str(vmi, "metadata", "annotations", DRAIN_START_TIME);
                if (start != null && !deletedAt.containsKey(name)) {
                  drainStart.put(name, start);
                }
                return RawKube.deleted(type, vmi);
              },
              deletedAt,
              vmiWatchResumes::incrementAndGet));
      List<String> flags =
          List.of(
              "--kubeconfig=" + infra.kubeconfig(),
              "--drain-timeout=" + drainTimeout.toSeconds() + "s");
      try (ControllerProcess c =
          ControllerJar.start("headofline", work, flags, Duration.ofMinutes(2))) {
        awaitIdle(c);
        progress("headofline: warm-up, one untimed evacuation per tenant");
        evacuate(of(Kind.WARMUP), Duration.ofMinutes(2));
        progress("headofline: phase 1, the %d free VMIs alone (fresh objects)", freeCount);
        evacuate(of(Kind.ALONE), drainTimeout.plus(Duration.ofSeconds(30)));
        awaitIdle(c);
        List<Vm> together = new ArrayList<>(of(Kind.FREE));
        together.addAll(of(Kind.BLOCKED));
        Collections.shuffle(together, new Random(14)); // free ones among the blocked ones
        progress(
            "headofline: phase 2, %d VMIs marked at once (%d blocked, %d free); deadline %d s",
            together.size(), blockedCount, freeCount, drainTimeout.toSeconds());
        List<Long> clusterPids = clusters.stream().flatMap(k -> k.pids().stream()).toList();
        // Every 250 ms the CPU samples, every second a guest round trip (the guests in turn).
        AtomicInteger round = new AtomicInteger();
        sample(c, clusterPids);
        try (AutoCloseable sampler =
            sampling(
                250,
                () -> {
                  sample(c, clusterPids);
                  int i = round.getAndIncrement();
                  if (i % 4 == 0) {
                    long t = System.nanoTime();
                    guestApis.get(i / 4 % tenants).get("/api/v1/namespaces/hol/pods?limit=1");
                    roundTripsMs.add((System.nanoTime() - t) / 1e6);
                  }
                  return null;
                })) {
          markingSeconds = evacuate(together, drainTimeout.plus(lateCap));
        }
        sample(c, clusterPids);
        try {
          metricsText = c.metrics();
        } catch (IOException e) {
          // reported as not exported
        }
        write(tenants);
      }
    } finally {
      for (AutoCloseable w : watches) {
        w.close();
      }
      clusters.forEach(LocalCluster::close);
    }
  }

  private List<Vm> of(Kind... kinds) {
    return vms.stream().filter(v -> List.of(kinds).contains(v.kind())).toList();
  }

  /**
   * The VM's guest node (named like it), and its pods, bound to it (kwok runs them) and labelled
   * with its name; they have no controller: the controller drains with force, as CAPK's does. A
   * blocked VM's pods fall under a {@code minAvailable: 100%} budget with the status the disruption
   * controller would compute (no disruption allowed): the guests run no kube-controller-manager (to
   * keep four guests light on two cores), and the eviction API reads only the status. Then the
   * Machine and KubevirtMachine CAPK keeps for the VM, and the VMI.
   */
  private void createVm(Vm vm) throws IOException {
    Map<String, String> labels =
        Map.of("node-role.kubernetes.io/worker", "", TenantCluster.TENANT_LABEL, vm.ns());
    guests.get(vm.tenant()).kwokNodes().createNamed(vm.name(), labels);
    RawKube guest = guestApis.get(vm.tenant());
    String ns = "/namespaces/" + GUEST_NAMESPACE;
    for (int j = 0; j < vm.pods(); j++) {
      guest.post(
          "/api/v1" + ns + "/pods",
          """
          {"metadata":{"name":"%1$s-%2$d","labels":{"vm":"%1$s"}},
           "spec":{"nodeName":"%1$s","automountServiceAccountToken":false,"terminationGracePeriodSeconds":1,
            "containers":[{"name":"main","image":"registry.example/app:1"}]}}"""
              .formatted(vm.name(), j));
    }
    if (vm.kind() == Kind.BLOCKED) {
      String pdbs = "/apis/policy/v1" + ns + "/poddisruptionbudgets";
      String created =
          guest.post(
              pdbs,
              """
              {"metadata":{"name":"%1$s"},"spec":{"minAvailable":"100%%","selector":{"matchLabels":{"vm":"%1$s"}}}}"""
                  .formatted(vm.name()));
      guest.mergePatch(
          pdbs + "/" + vm.name() + "/status",
          """
          {"status":{"observedGeneration":%s,"disruptionsAllowed":0,"currentHealthy":%d,"desiredHealthy":%2$d,"expectedPods":%2$d}}"""
              .formatted(RawKube.str(created, "metadata", "generation"), BLOCKED_PODS));
    }
    String machine =
        infraApi.post(
            "/apis/cluster.x-k8s.io/v1beta1/namespaces/" + vm.ns() + "/machines",
            """
            {"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine",
             "metadata":{"name":"%1$s","labels":{"cluster.x-k8s.io/cluster-name":"%2$s"}},"spec":{"clusterName":"%2$s"}}"""
                .formatted(vm.name(), vm.ns()));
    infraApi.post(
        "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/%s/kubevirtmachines"
            .formatted(vm.ns()),
        """
        {"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"KubevirtMachine",
         "metadata":{"name":"%1$s","labels":{"cluster.x-k8s.io/cluster-name":"%2$s"},
          "ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine","name":"%1$s","uid":"%3$s"}]}}"""
            .formatted(vm.name(), vm.ns(), RawKube.str(machine, "metadata", "uid")));
    String ip = "10.244.0." + (Math.abs(vm.name().hashCode()) % 250 + 2);
    RealisticVmis.create(infraApi, vm.ns(), vm.name(), vm.ns(), INFRA_NODE, ip);
  }

  /** Until the controller's CPU stops growing: its start-up or the last phase's aftermath. */
  private static void awaitIdle(ControllerProcess c) throws Exception {
    Bench.awaitQuiet(
        () -> ControllerProcess.processCpuSeconds(c.pid()),
        0.1,
        Duration.ZERO,
        Duration.ofMinutes(1));
  }

  /**
   * Sets {@code status.evacuationNodeName} on every VMI of {@code batch} at once (as KubeVirt does
   * when it refuses the launcher's eviction) and waits until each is deleted or {@code timeout}
   * passed; returns the seconds the marking took.
   */
  private double evacuate(List<Vm> batch, Duration timeout) throws Exception {
    long t0 = System.nanoTime();
    parallel(
        batch.size(),
        32,
        i -> RealisticVmis.mark(infraApi, batch.get(i).ns(), batch.get(i).name(), INFRA_NODE));
    double marking = secondsSince(t0);
    long deadline = System.nanoTime() + timeout.toNanos();
    long lastProgress = System.nanoTime();
    long left;
    while ((left = batch.stream().filter(v -> !deletedAt.containsKey(v.name())).count()) > 0
        && System.nanoTime() < deadline) {
      if (secondsSince(lastProgress) > 30) {
        lastProgress = System.nanoTime();
        progress("headofline: %d of %d VMIs not deleted yet", left, batch.size());
      }
      Thread.sleep(100);
    }
    return marking;
  }

  private void sample(ControllerProcess c, List<Long> clusterPids) {
    double clusters =
        clusterPids.stream()
            .mapToDouble(p -> Math.max(0, ControllerProcess.processCpuSeconds(p)))
            .sum();
    samples.add(
        new double[] {
          Instant.now().toEpochMilli() / 1e3,
          BenchMain.busyCpuSeconds(),
          ControllerProcess.processCpuSeconds(c.pid()),
          clusters,
          ControllerProcess.processCpuSeconds(ProcessHandle.current().pid()),
          c.rssKb()
        });
  }

  /** Per VM of {@code kind}: ({@code to} - {@code from}) × {@code scale} where both are known. */
  private Stats times(Kind kind, ToDoubleFunction<Vm> from, ToDoubleFunction<Vm> to, double scale) {
    return known(of(kind), vm -> (to.applyAsDouble(vm) - from.applyAsDouble(vm)) * scale);
  }

  /** {@code f} of each of {@code vms} where it is known (not NaN). */
  private static Stats known(List<Vm> vms, ToDoubleFunction<Vm> f) {
    return Stats.of(vms.stream().map(f::applyAsDouble).filter(d -> !d.isNaN()).toList());
  }

  private void write(int tenants) {
    // The API servers' own times, from their audit logs (one clock), in epoch seconds: a VMI's
    // marking stored and its delete request received, each guest pod removed.
    Map<String, AuditLog.Evacuation> evacuations =
        AuditLog.evacuations(AuditLog.logOf(auditDir(), INFRA_CLUSTER), Instant.EPOCH, Instant.MAX);
    Map<String, Double> podRemoved = new HashMap<>();
    for (int k = 0; k < tenants; k++) {
      for (AuditLog.Entry e : AuditLog.entries(AuditLog.logOf(auditDir(), GUEST_CLUSTER + k))) {
        if (e.code() == 200 && e.verb().equals("delete") && e.subresource() == null) {
          podRemoved.merge(e.name(), AuditLog.epoch(e.completed()), Math::max);
        }
      }
    }
    ToDoubleFunction<Vm> markedStored =
        vm -> evacuations.getOrDefault(vm.name(), AuditLog.Evacuation.NONE).marked();
    ToDoubleFunction<Vm> deleteRequested =
        vm -> evacuations.getOrDefault(vm.name(), AuditLog.Evacuation.NONE).deleteRequested();
    // The last of the VM's pods removed, NaN unless all are known.
    ToDoubleFunction<Vm> podsRemoved =
        vm ->
            IntStream.range(0, vm.pods())
                .mapToDouble(j -> podRemoved.getOrDefault(vm.name() + "-" + j, Double.NaN))
                .max()
                .orElse(Double.NaN);
    Stats alone = times(Kind.ALONE, markedStored, deleteRequested, 1);
    Stats free = times(Kind.FREE, markedStored, deleteRequested, 1);
    Stats reactionFree = times(Kind.FREE, podsRemoved, deleteRequested, 1000);
    List<Vm> freeVms = of(Kind.FREE);
    List<Vm> blocked = of(Kind.BLOCKED);
    long timeout = drainTimeout.toSeconds();
    long notDeleted = blocked.size() - known(blocked, deleteRequested).n();
    ToDoubleFunction<Vm> drainStarted = vm -> parseEpoch(drainStart.get(vm.name()));
    Stats late =
        Stats.over(
            times(Kind.BLOCKED, drainStarted, deleteRequested, 1).sorted(), x -> x - timeout);
    // The deadline as the issue means it: from the moment the VMI was marked, not from when the
    // controller got round to writing its drain start.
    Stats lateSinceMark =
        Stats.over(
            times(Kind.BLOCKED, markedStored, deleteRequested, 1).sorted(), x -> x - timeout);
    long within2s = late.sorted().stream().filter(s -> s <= 2.0).count();
    int freeMissing = freeVms.size() - free.n();
    int reactionUntimed = freeVms.size() - reactionFree.n();
    Metrics metrics = new Metrics(metricsText);
    Optional<Metrics.Histogram> reconcile = metrics.histogram(RECONCILE_HISTOGRAM);
    Optional<Double> reconcileMax = metrics.gaugeMax(RECONCILE_MAX_GAUGE);
    String reconcileText =
        reconcile
                .map(h -> Report.f("p99 ≤ %s s (of %.0f)", h.percentileBound(99), h.count()))
                .orElse("not exported")
            + reconcileMax.map(m -> Report.f(", max %.2f s", m)).orElse(", max n/a");
    Stats rtt = Stats.of(roundTripsMs);
    List<List<String>> evacRows = new ArrayList<>();
    List<List<String>> reactionRows = new ArrayList<>();
    for (Kind kind : List.of(Kind.ALONE, Kind.FREE)) {
      String label =
          kind == Kind.ALONE ? "alone (phase 1)" : "with " + blocked.size() + " blocked (phase 2)";
      Stats e = times(kind, markedStored, deleteRequested, 1);
      Stats r = times(kind, podsRemoved, deleteRequested, 1000);
      evacRows.add(Report.row(label, e.n(), e.cells(S, MEDIAN_P95_MAX)));
      reactionRows.add(Report.row(label, r.n(), r.cells("%.0f", "median", "p95", "p99", "max")));
    }
    String figures =
        Report.f(
            """
            | figure | value |
            | --- | --- |
            | free VMIs not deleted within the wait / reaction not timed | %d / %d |
            | blocked: lateness after the deadline, median / p95 / max (min) s | %s (%.1f) |
            | blocked: deletion after marking + %d s, median / p95 / max s (deleted) | %s (%d) |
            | blocked: not deleted by marking + %d s / deleted without drain start seen | %d / %d |
            | controller in phase 2: CPU s / peak RSS MiB | %.1f / %.0f |
            | guest round trip in phase 2 (a LIST each second): median / max ms (samples) | %.0f / %.0f (%d) |
            | reconcile duration `%s`, max `%s` | %s |
            | drain pass duration `vmi_eviction_drain_pass_duration_seconds` p50 / p99 (passes) | %s |
            | load average at the end | %s |
            """,
            freeMissing,
            reactionUntimed,
            late.joined(S, MEDIAN_P95_MAX),
            late.min(),
            timeout,
            lateSinceMark.joined(S, MEDIAN_P95_MAX),
            lateSinceMark.n(),
            drainTimeout.plus(lateCap).toSeconds(),
            notDeleted,
            blocked.size() - notDeleted - late.n(),
            samples.get(samples.size() - 1)[2] - samples.get(0)[2],
            samples.stream().mapToDouble(s -> s[5]).max().orElse(0) / 1024,
            rtt.median(),
            rtt.max(),
            rtt.n(),
            RECONCILE_HISTOGRAM,
            RECONCILE_MAX_GAUGE,
            reconcileText,
            metrics
                .histogram("vmi_eviction_drain_pass_duration_seconds")
                .map(
                    h ->
                        Report.f(
                            "≤ %s / ≤ %s s (%.0f)",
                            h.percentileBound(50), h.percentileBound(99), h.count()))
                .orElse("not exported"),
            BenchMain.loadAverage());
    // The machine from phase 2's first marking to its last free VMI's delete request: the last
    // sample at or before the one, the first at or after the other.
    double from = known(of(Kind.FREE, Kind.BLOCKED), markedStored).min();
    double to = known(freeVms, deleteRequested).max();
    if (!Double.isNaN(from + to) && !samples.isEmpty()) {
      double[] a =
          samples.stream().filter(s -> s[0] <= from).reduce((x, y) -> y).orElse(samples.get(0));
      double[] b =
          samples.stream()
              .filter(s -> s[0] >= to)
              .findFirst()
              .orElse(samples.get(samples.size() - 1));
      double[] d = IntStream.range(0, 5).mapToDouble(i -> b[i] - a[i]).toArray();
      figures +=
          Report.f(
              "| machine from phase 2's first marking to its last free delete: busy; CPU-s of controller / clusters / bench / rest | %.1f s, %.0f%% of %d cores (%.1f CPU-s); %.1f / %.1f / %.1f / %.1f |\n",
              d[0],
              d[0] <= 0 ? 0 : 100 * d[1] / (BenchMain.cores() * d[0]),
              BenchMain.cores(),
              d[1],
              d[2],
              d[3],
              d[4],
              Math.max(0, d[1] - d[2] - d[3] - d[4]));
    }
    report.section(
        Report.f(
                """
                ## 7. Head-of-line: free evacuations among blocked ones

                An infra API server and %d tenant clusters (etcd, kube-apiserver, kwok). Each VMI has its guest \
                node (named like it), Machine and KubevirtMachine. Free: %d pods, no budget. Blocked: %d pods under \
                a `minAvailable: 100%%` budget whose status (disruptionsAllowed 0) the benchmark writes. Marking: a \
                merge patch of `status.evacuationNodeName`, 32 in parallel. Controller `--drain-timeout=%ds`, JVM \
                `%s`. One untimed evacuation per tenant, then phase 1: %d free VMIs alone; phase 2: as many free \
                and %d blocked, shuffled, marked at once (in %.2f s). Times from the API servers' audit logs (one \
                clock): evacuation = marking stored to the VMI's delete request; reaction = the node's last pod \
                removed to that request; lateness = deletion minus (drain start annotation + timeout), waits capped \
                at marking + %d s (the benchmark's VMI watch, which ends the waits, resumed %d times).

                """,
                tenants,
                FREE_PODS,
                BLOCKED_PODS,
                timeout,
                ControllerJar.describeDeployed(),
                freeVms.size(),
                blocked.size(),
                markingSeconds,
                drainTimeout.plus(lateCap).toSeconds(),
                vmiWatchResumes.get())
            + Report.table("free VMIs|timed|median s|p95 s|max s", evacRows)
            + "\n"
            + Report.table(
                "reaction, last pod gone to VMI deleted|timed|median ms|p95 ms|p99 ms|max ms",
                reactionRows)
            + "\n"
            + figures);
    String what = "7. head-of-line: ";
    for (String stat : List.of("median", "max")) {
      double ratio = free.get(stat) / alone.get(stat);
      double limit = stat.equals("median") ? 1.2 : 1.5;
      report.verdict(
          what + "free VMIs' " + stat + ", with blocked / alone",
          Report.f("%.2f", ratio),
          "≤ " + limit,
          free.isEmpty() || alone.isEmpty() ? null : freeMissing == 0 && ratio <= limit);
    }
    report.verdict(
        what + "reaction from last pod gone to VMI deleted, p99",
        Report.f(
            "%.0f ms (max %.0f ms, %d of %d free VMIs timed, with %d blocked)",
            reactionFree.percentile(99),
            reactionFree.max(),
            reactionFree.n(),
            freeVms.size(),
            blocked.size()),
        "≤ 500 ms",
        reactionFree.isEmpty() ? null : reactionUntimed == 0 && reactionFree.percentile(99) <= 500);
    report.verdict(
        what + "blocked VMIs deleted within 2 s of their deadline",
        Report.f("%d of %d (max lateness %.1f s)", within2s, blocked.size(), late.max()),
        "all",
        within2s == blocked.size());
    report.verdict(
        what + "longest reconcile",
        reconcileText,
        Report.f("≤ a guest round trip (max seen %.2f s) + 1 s", rtt.max() / 1000),
        reconcileMax.isEmpty() || reconcile.isEmpty()
            ? null
            : reconcileMax.get() <= rtt.max() / 1000 + 1);
  }

  private static double parseEpoch(String raw) {
    return raw == null ? Double.NaN : AuditLog.epoch(OffsetDateTime.parse(raw).toInstant());
  }
}
