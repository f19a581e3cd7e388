package dev.capk.vmieviction.manager;

import com.google.common.cache.CacheBuilder;
import com.google.common.collect.Maps;
import dev.capk.vmieviction.api.capk.KubevirtCluster;
import dev.capk.vmieviction.events.EventSeriesRecorder;
import dev.capk.vmieviction.eviction.VmiEvents;
import dev.capk.vmieviction.infra.BoundTenants;
import dev.capk.vmieviction.infra.InfraBindings;
import dev.capk.vmieviction.infra.InfraBindings.Problem;
import dev.capk.vmieviction.infra.InfraBindings.Target;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.runtime.ControllerRuntime;
import dev.capk.vmieviction.runtime.ManagedController;
import dev.capk.vmieviction.runtime.TwoLaneWorkQueue;
import dev.capk.vmieviction.shards.ShardLeases;
import dev.capk.vmieviction.workload.GuestClusterRef;
import io.kubernetes.client.extended.controller.Controller;
import io.kubernetes.client.extended.controller.builder.ControllerBuilder;
import io.kubernetes.client.extended.controller.reconciler.Request;
import io.kubernetes.client.extended.controller.reconciler.Result;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * External infra ({@code --infra-clusters=external}): keeps one {@link InfraPipeline} running per
 * (infra connection, infra namespace) that {@link InfraBindings} derives from the KubevirtClusters
 * and the infra Secrets they name: while this replica leads, or with {@link Sharding} for the infra
 * clusters whose Lease it holds ({@link ShardLeases}). One worker reconciles the bindings after
 * each change (a burst of events costs one pass) and every {@link #RESYNC_EVERY}. A KubevirtCluster
 * that cannot be bound, or whose infra cluster does not answer, gets a Warning Event and a log line
 * (again at most every {@link #REPORT_AGAIN}), never its Secret's content. Readiness is the
 * management caches': an infra cluster that is down makes no replica unready.
 */
final class ExternalInfraController implements ManagedController {

  private static final Logger log = LoggerFactory.getLogger(ExternalInfraController.class);

  static final String NAME = "vmi-eviction-external-infra";

  /** Also retries unreadable Secrets. */
  static final Duration RESYNC_EVERY = Duration.ofSeconds(10);

  static final Duration DEBOUNCE = Duration.ofMillis(200);
  static final Duration REPORT_AGAIN = Duration.ofMinutes(5);

  /** List/watch failures of one pipeline within UNREACHABLE_WITHIN that make it unreachable. */
  static final int UNREACHABLE_AFTER = 3;

  static final Duration UNREACHABLE_WITHIN = Duration.ofSeconds(30);
  private static final Request BINDINGS = new Request("", "bindings"); // the queue's one item

  private final InfraPipeline.Shared shared;
  private final EventSeriesRecorder managementEvents;
  private final InfraSecretWatches secrets;
  private final TwoLaneWorkQueue<Request> queue = new TwoLaneWorkQueue<>("infra-bindings");
  private final Controller workers;
  private final Map<String, InfraConnection> connections = new HashMap<>();
  private final Map<Target, Running> pipelines = new ConcurrentHashMap<>();

  /** The message last told per KubevirtCluster and reason, forgotten after REPORT_AGAIN. */
  private final Map<String, String> reported =
      CacheBuilder.newBuilder().expireAfterWrite(REPORT_AGAIN).<String, String>build().asMap();

  private boolean stopped;

  /** Null: every infra cluster is run (under the one leader's lease, if any). */
  private final ShardLeases shards;

  /**
   * --shard-infra-clusters: one Lease per infra cluster, and the owned-shards gauge.
   *
   * @param registry null: no gauge
   */
  record Sharding(ShardLeases.Settings settings, PrometheusRegistry registry) {}

  /** A pipeline running for one target, in a runtime of its own, what is bound there, failures. */
  private record Running(
      String shard,
      String name,
      BoundTenants tenants,
      InfraPipeline pipeline,
      ControllerRuntime runtime,
      Deque<Failure> failures) {}

  /** A failed list or watch of a pipeline's VMIs, described without the server's text. */
  private record Failure(long nanoTime, String why) {}

  /**
   * @param sharding null: not sharded
   */
  ExternalInfraController(InfraPipeline.Shared shared, Sharding sharding) {
    this.shared = shared;
    this.shards =
        sharding == null
            ? null
            : new ShardLeases(
                shared.home().requestClient,
                sharding.settings(),
                () -> queue.add(BINDINGS), // a shard lost stops at once: no debounce
                this::runs);
    if (shards != null && sharding.registry() != null) {
      shards.metrics(sharding.registry());
    }
    // On KubevirtMachines (evacuation outcomes) and KubevirtClusters (infra problems).
    this.managementEvents =
        InfraConnection.events(
            shared.home().requestClient, VmiEvents.MIRRORED, "management-events", 2);
    shared.management().onKubevirtClusterChanged(this::changed);
    this.secrets =
        new InfraSecretWatches(
            shared.home().watchClient, shared.home().requestClient, this::changed);
    queue.add(BINDINGS);
    this.workers =
        ControllerBuilder.defaultBuilder(shared.management().factories().get(0))
            .withName(NAME)
            .withWorkQueue(queue)
            .withReconciler(
                request -> {
                  try {
                    resync();
                  } catch (RuntimeException e) {
                    log.error("binding infra clusters failed error={}", e.getClass().getName(), e);
                  }
                  return new Result(true, RESYNC_EVERY);
                })
            .withWorkerCount(1)
            .build();
  }

  private void changed() {
    queue.addAfter(BINDINGS, DEBOUNCE);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void start() {
    if (shards != null) {
      shards.start();
    }
  }

  /** Whether a pipeline of this infra cluster still runs: its Lease is given back only once not. */
  private boolean runs(String infraCluster) {
    return pipelines.values().stream().anyMatch(r -> r.shard().equals(infraCluster));
  }

  @Override
  public boolean hasSynced() {
    return shared.management().hasSynced();
  }

  @Override
  public int queueLength() {
    return pipelines.values().stream().mapToInt(r -> r.pipeline().queueLength()).sum();
  }

  @Override
  public Controller workers() {
    return workers;
  }

  /** The lease is given up or the process stops: no pipeline may outlive it. */
  @Override
  public synchronized void stopping() {
    stopped = true;
    syncPipelines(new InfraBindings(Map.of(), Map.of(), List.of()));
    secrets.close();
  }

  /** After the pipelines stopped: the shards' Leases are given back at once. */
  @Override
  public void close() {
    stopping();
    if (shards != null) {
      shards.close();
    }
    managementEvents.close();
  }

  private synchronized void resync() {
    if (stopped) {
      return;
    }
    List<KubevirtCluster> all = shared.management().kubevirtClusters();
    secrets.retain(InfraBindings.referencedSecrets(all));
    // A Secret never read is a problem of its KubevirtClusters only; the next pass reads again.
    InfraBindings bindings =
        ours(InfraBindings.of(all, secrets::data, shared.options().allowInsecureGuestTls));
    List<Problem> problems = new ArrayList<>(bindings.problems());
    openConnections(bindings, problems);
    syncPipelines(bindings);
    unreachable(problems);
    reportProblems(problems);
  }

  /**
   * Sharded: the targets of the infra clusters whose Lease this replica holds, and the problems of
   * binding that this replica reports (one replica per KubevirtCluster); all of them otherwise.
   */
  private InfraBindings ours(InfraBindings all) {
    if (shards == null) {
      return all;
    }
    Map<String, InfraBindings.Connection> connections = all.connections();
    shards.want(
        connections.values().stream()
            .map(InfraBindings.Connection::infraCluster)
            .collect(Collectors.toSet()));
    Map<Target, InfraBindings.Bound> targets = new HashMap<>(all.targets());
    targets.keySet().removeIf(t -> !shards.holds(connections.get(t.connectionId()).infraCluster()));
    Set<String> used =
        targets.keySet().stream().map(Target::connectionId).collect(Collectors.toSet());
    List<Problem> problems =
        all.problems().stream()
            .filter(
                p ->
                    shards.reports(
                        p.kubevirtCluster().getNamespace() + "/" + p.kubevirtCluster().getName()))
            .toList();
    return new InfraBindings(Maps.filterKeys(connections, used::contains), targets, problems);
  }

  /** One connection per distinct kubeconfig, unless it cannot be opened. */
  private void openConnections(InfraBindings bindings, List<Problem> problems) {
    for (InfraBindings.Connection c : bindings.connections().values()) {
      if (connections.containsKey(c.id())) {
        continue;
      }
      try {
        connections.put(c.id(), InfraConnection.open(c));
        if (c.allowsInsecureTls()) {
          log.warn(
              "infra kubeconfig relaxes TLS, accepted (--allow-insecure-guest-tls) infra=\"{}\"",
              c.displayName());
        }
        log.info("infra connection opened infra=\"{}\"", c.displayName());
      } catch (IllegalArgumentException e) {
        String why = c.displayName() + ": " + e.getMessage();
        bindings.targets().entrySet().stream()
            .filter(t -> t.getKey().connectionId().equals(c.id()))
            .flatMap(t -> t.getValue().kubevirtClusters().stream())
            .forEach(k -> problems.add(new Problem(k, Problem.INFRA_SECRET_INVALID, why)));
      }
    }
  }

  /** Stops what is no longer bound or has no connection, starts what is new, rebinds the rest. */
  private void syncPipelines(InfraBindings bindings) {
    for (Target t : Set.copyOf(pipelines.keySet())) {
      if (!bindings.targets().containsKey(t) || !connections.containsKey(t.connectionId())) {
        Running r = pipelines.get(t);
        r.runtime().close();
        // Removed once its reconciles ended: until then its infra cluster's Lease is kept.
        pipelines.remove(t);
        log.info("infra pipeline stopped infra=\"{}\"", r.name());
      }
    }
    for (var e : bindings.targets().entrySet()) {
      Running running = pipelines.get(e.getKey());
      InfraConnection connection = connections.get(e.getKey().connectionId());
      if (running != null) {
        rebind(running, e.getValue());
      } else if (connection != null) {
        String shard = bindings.connections().get(e.getKey().connectionId()).infraCluster();
        start(e.getKey(), connection, shard, e.getValue());
      }
    }
    for (String id : Set.copyOf(connections.keySet())) {
      boolean used = pipelines.keySet().stream().anyMatch(t -> t.connectionId().equals(id));
      if (!used) {
        InfraConnection c = connections.remove(id);
        c.close();
        log.info("infra connection closed infra=\"{}\"", c.name);
      }
    }
  }

  /** No lease of its own: it runs under this controller's. */
  private void start(
      Target t, InfraConnection connection, String shard, InfraBindings.Bound bound) {
    String name = connection.name + " namespace " + t.namespace();
    BoundTenants tenants = new BoundTenants(name, bound);
    Deque<Failure> failures = new ArrayDeque<>();
    String server = connection.watchClient.getBasePath();
    InfraPipeline pipeline =
        new InfraPipeline(
            t.namespace(),
            connection,
            InfraPipeline.vmis(
                connection,
                List.of(t.namespace()),
                shared.options(),
                e -> {
                  synchronized (failures) {
                    failures.addLast(new Failure(System.nanoTime(), describe(e, server)));
                  }
                  changed();
                }),
            tenants,
            onVmi ->
                VmiEvents.mirrored(
                    onVmi,
                    managementEvents,
                    tenants,
                    () -> tenants.bound().kubevirtClusters(),
                    name),
            shared);
    ControllerRuntime runtime =
        new ControllerRuntime(
            List.of(pipeline),
            null,
            Duration.ofSeconds(30),
            () -> log.info("infra pipeline synced infra=\"{}\"", name));
    pipelines.put(t, new Running(shard, name, tenants, pipeline, runtime, failures));
    runtime.start();
    log.info(
        "infra pipeline started infra=\"{}\" infraCluster={} clusters={}",
        name,
        shard,
        bound.clusters());
  }

  private static void rebind(Running r, InfraBindings.Bound bound) {
    Set<GuestClusterRef> before = r.tenants().bound().clusters();
    r.tenants().rebind(bound);
    if (!bound.clusters().equals(before)) {
      log.info("infra pipeline rebound infra=\"{}\" clusters={}", r.name(), bound.clusters());
      // The VMIs of Clusters bound or unbound look again: some are ours now, others no longer.
      Stream.concat(before.stream(), bound.clusters().stream())
          .map(GuestClusterRef::name)
          .distinct()
          .forEach(r.pipeline()::wake);
    }
  }

  /**
   * The pipelines whose VMI informer failed to list or watch. One failure is a blip (a watch cut, a
   * 429): the infra cluster counts as unreachable only after UNREACHABLE_AFTER within
   * UNREACHABLE_WITHIN.
   */
  private void unreachable(List<Problem> problems) {
    long now = System.nanoTime();
    for (Running r : pipelines.values()) {
      String why;
      synchronized (r.failures()) {
        r.failures().removeIf(f -> now - f.nanoTime() > UNREACHABLE_WITHIN.toNanos());
        if (r.failures().size() < UNREACHABLE_AFTER) {
          continue;
        }
        why = r.failures().getLast().why();
      }
      String message =
          ("The VMIs of %s cannot be listed or watched (%s): their evacuations wait until the"
                  + " infra API server answers")
              .formatted(r.name(), why);
      for (V1ObjectReference kvc : r.tenants().bound().kubevirtClusters()) {
        problems.add(new Problem(kvc, Problem.INFRA_CLUSTER_UNREACHABLE, message));
      }
    }
  }

  /** Logs and events each problem not told with the same message within REPORT_AGAIN. */
  private void reportProblems(List<Problem> problems) {
    Set<String> current = new HashSet<>();
    for (Problem p : problems) {
      V1ObjectReference kvc = p.kubevirtCluster();
      String key = kvc.getNamespace() + "/" + kvc.getName() + "/" + p.reason();
      current.add(key);
      if (p.message().equals(reported.get(key))) {
        continue; // not put again: it expires REPORT_AGAIN after it was told
      }
      reported.put(key, p.message());
      log.warn(
          "kubevirtcluster problem kubevirtCluster={}/{} reason={} detail=\"{}\"",
          kvc.getNamespace(),
          kvc.getName(),
          p.reason(),
          p.message());
      managementEvents.record(kvc, "", true, p.reason(), p.message());
    }
    reported.keySet().retainAll(current);
  }

  /** How a list/watch failed, never quoting the server or the exception's message. */
  static String describe(Throwable e, String serverUrl) {
    if (e instanceof ApiException a && a.getCode() != 0) {
      return RawApi.describeWithoutServerText(a);
    }
    Throwable cause = e;
    // GenericKubernetesApi wraps an I/O failure in an IllegalStateException.
    while ((cause instanceof IllegalStateException || cause instanceof ApiException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return "no answer: " + RawApi.describeWithoutServerText(cause, serverUrl);
  }
}
