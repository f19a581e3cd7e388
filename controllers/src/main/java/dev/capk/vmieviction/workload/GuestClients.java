package dev.capk.vmieviction.workload;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.common.cache.RemovalNotification;
import dev.capk.vmieviction.api.capi.Cluster;
import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capi.ClusterList;
import dev.capk.vmieviction.kube.CipherOrder;
import dev.capk.vmieviction.kube.ClientCertificates;
import dev.capk.vmieviction.kube.ConnectionThreads;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.time.Deadline;
import dev.capk.vmieviction.workload.GuestAccessException.Reason;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * One cached client per guest cluster. The Cluster must exist (in the informer cache, else a GET);
 * the kubeconfig comes from the Secret {@code <cluster>-kubeconfig} (key {@code value}), looked up
 * in the Secrets' cache at every call, else read with a GET at most every {@link #RECHECK}; a
 * client is rebuilt when the Secret's UID or resourceVersion changes and dropped when idle. A
 * cluster's circuit breaker and throttle outlive its clients, so a rotated Secret does not reset a
 * dead API's state.
 */
public final class GuestClients implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GuestClients.class);

  /**
   * @param idleTtl how long an unused client is kept
   * @param allowInsecureTls accept kubeconfigs that relax TLS ({@code insecure-skip-tls-verify},
   *     {@code tls-server-name}, {@code proxy-url}); off unless the operator asks for it
   * @param limits each guest cluster's request rate and steps at once
   */
  public record Settings(
      Duration idleTtl, boolean allowInsecureTls, GuestClient.Throttle.Limits limits) {}

  // Short timeouts and few retries: a stalled guest API server must cost a worker seconds, not
  // minutes (worst case per call: attempts x call timeout + waits).
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
  static final Duration READ_TIMEOUT = Duration.ofSeconds(5);
  static final int RETRY_ATTEMPTS = 2;
  static final Duration RETRY_WAIT = Duration.ofMillis(250);
  static final Duration CIRCUIT_OPEN_FOR = Duration.ofSeconds(20);

  /**
   * The total bound of one guest request: connecting, TLS, sending and reading the whole answer.
   * The connect and read timeouts alone bound each step, so a server that sends its answer one byte
   * at a time, each within the read timeout, could hold a worker for hours.
   */
  static final Duration CALL_TIMEOUT = CONNECT_TIMEOUT.plus(READ_TIMEOUT);

  private final CoreV1Api infraCore;
  private final GenericKubernetesApi<Cluster, ClusterList> clusters;
  private final CachedObjects<Cluster> cachedClusters;
  private final CachedObjects<V1Secret> cachedSecrets;
  private final Settings settings;
  private final Cache<GuestClusterRef, GuestClient> cache;
  private final Counter opened;

  /**
   * How long a look at a tenant's Cluster and Secret counts as current: a tenant's steps come in
   * bursts, each would read them again. A deleted Cluster or rotated Secret is seen this late.
   */
  static final Duration RECHECK = Duration.ofSeconds(3);

  /** What a cluster keeps across its clients: its breaker and throttle. */
  private final class Tenant {
    final GuestClient.Throttle throttle = new GuestClient.Throttle(settings.limits());
    final CircuitBreaker breaker;
    volatile long checkedAt = System.nanoTime() - RECHECK.toNanos(); // never

    Tenant(GuestClusterRef ref) {
      breaker = CircuitBreaker.of(ref.toString(), BREAKER);
      // One line per state change: when a tenant's API server was given up on, and tried again.
      breaker
          .getEventPublisher()
          .onStateTransition(
              t -> {
                CircuitBreaker.State to = t.getStateTransition().getToState();
                if (to != CircuitBreaker.State.OPEN) {
                  log.info("guest circuit {} cluster={}", to.name().toLowerCase(), ref);
                  return;
                }
                log.warn("guest circuit opened cluster={} openFor={}", ref, CIRCUIT_OPEN_FOR);
                opened.inc();
              });
    }
  }

  private final Map<GuestClusterRef, Tenant> tenants = new ConcurrentHashMap<>();

  /**
   * @param cachedClusters, cachedSecrets looked in first; what they lack is read with a GET
   * @param registry where the circuit and cache metrics go
   */
  public GuestClients(
      ApiClient infra,
      String clusterApiVersion,
      CachedObjects<Cluster> cachedClusters,
      CachedObjects<V1Secret> cachedSecrets,
      Settings settings,
      PrometheusRegistry registry) {
    this.cachedClusters = cachedClusters;
    this.cachedSecrets = cachedSecrets;
    this.infraCore = new CoreV1Api(infra);
    this.clusters = ManagementApis.clusters(infra, clusterApiVersion);
    this.settings = settings;
    this.cache =
        CacheBuilder.newBuilder()
            .expireAfterAccess(settings.idleTtl())
            .removalListener(GuestClients::dropped)
            .build();
    opened =
        Counter.builder()
            .name("vmi_eviction_guest_circuit_opened_total")
            .help("Times a guest cluster's circuit breaker opened (its API server kept failing).")
            .register(registry);
    GaugeWithCallback.builder()
        .name("vmi_eviction_guest_circuits_open")
        .help("Guest clusters whose circuit breaker is open now.")
        .callback(
            c ->
                c.call(
                    tenants.values().stream()
                        .filter(t -> t.breaker.getState() == CircuitBreaker.State.OPEN)
                        .count()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("vmi_eviction_guest_clients_cached")
        .help("Guest cluster clients currently cached.")
        .callback(c -> c.call(cache.size()))
        .register(registry);
  }

  private static void dropped(RemovalNotification<GuestClusterRef, GuestClient> n) {
    log.info("guest client dropped cluster={} cause={}", n.getKey(), n.getCause());
    n.getValue().close(); // strong values: never collected, so never null
  }

  /**
   * The breaker opens when most of the last calls to a guest API failed transiently (no answer,
   * 5xx, 429); while open, calls fail at once. Answers like 404 or 403 mean the API works.
   */
  static final CircuitBreakerConfig BREAKER =
      CircuitBreakerConfig.custom()
          .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
          .slidingWindowSize(10)
          .minimumNumberOfCalls(5)
          .failureRateThreshold(60)
          .waitDurationInOpenState(CIRCUIT_OPEN_FOR)
          .permittedNumberOfCallsInHalfOpenState(2)
          .automaticTransitionFromOpenToHalfOpenEnabled(false)
          .recordException(GuestClient::isTransient)
          .build();

  /** Keeps no state between calls: one serves every cluster. */
  static final Retry RETRY =
      Retry.of(
          "guest-api",
          RetryConfig.custom()
              .maxAttempts(RETRY_ATTEMPTS)
              .intervalFunction(IntervalFunction.ofExponentialBackoff(RETRY_WAIT.toMillis(), 2.0))
              .retryOnException(GuestClient::isTransient)
              .build());

  /**
   * The client for a guest cluster, whose Cluster exists and kubeconfig Secret is usable.
   *
   * @throws GuestAccessException with a specific reason; its message is safe to publish
   */
  public GuestClient get(GuestClusterRef ref) throws GuestAccessException {
    Tenant tenant = tenants.computeIfAbsent(ref, Tenant::new);
    GuestClient cached = cache.getIfPresent(ref);
    // The cache costs no request, so it is asked every time: a rotated Secret is used at the first
    // call after the watch delivered it, not a RECHECK later.
    String secretName = ClusterApi.kubeconfigSecretName(ref.name());
    V1Secret fromCache = cachedSecrets.find(ref.namespace(), secretName).orElse(null);
    if (cached != null
        && System.nanoTime() - tenant.checkedAt < RECHECK.toNanos()
        && (fromCache == null || cached.secretVersion().equals(versionOf(fromCache)))) {
      return cached;
    }
    if (cachedClusters.find(ref.namespace(), ref.name()).isEmpty()) {
      read(
          "Cluster " + ref,
          Reason.ClusterNotFound,
          () -> clusters.get(ref.namespace(), ref.name()).throwsApiException());
    }
    V1Secret secret =
        fromCache != null
            ? fromCache
            : read(
                "kubeconfig Secret " + ref.namespace() + "/" + secretName,
                Reason.KubeconfigSecretNotFound,
                () -> infraCore.readNamespacedSecret(secretName, ref.namespace()).execute());
    String version = versionOf(secret);
    synchronized (tenant) { // several workers may miss at once: one builds the client
      cached = cache.getIfPresent(ref);
      if (cached == null || !cached.secretVersion().equals(version)) {
        GuestClient fresh = build(ref, secret, version, tenant);
        log.info(
            cached == null
                ? "guest client created cluster={}"
                : "guest client rebuilt cluster={} reason=kubeconfig Secret changed",
            ref);
        cache.put(ref, cached = fresh);
      }
      tenant.checkedAt = System.nanoTime();
      return cached;
    }
  }

  /** Drops clients idle for longer than the idle time (the cache also does it on access). */
  public void cleanUp() {
    cache.cleanUp();
  }

  /** One infra read: a 404 is {@code notFound}, any other failure an InfraAPIError. */
  private static <T> T read(String what, Reason notFound, Callable<T> read)
      throws GuestAccessException {
    try {
      return read.call();
    } catch (ApiException e) {
      throw e.getCode() == 404
          ? new GuestAccessException(notFound, what + " not found")
          : new GuestAccessException(
              Reason.InfraAPIError,
              "reading " + what + " failed: " + RawApi.describeWithoutServerText(e));
    } catch (Exception e) { // GenericKubernetesApi's IllegalStateException: an I/O failure
      throw new GuestAccessException(
          Reason.InfraAPIError, "reading " + what + " failed: no response");
    }
  }

  private static String versionOf(V1Secret secret) {
    return secret.getMetadata().getUid() + "/" + secret.getMetadata().getResourceVersion();
  }

  private GuestClient build(GuestClusterRef ref, V1Secret secret, String version, Tenant tenant)
      throws GuestAccessException {
    String secretName = ref.namespace() + "/" + secret.getMetadata().getName();
    Map<String, byte[]> data = secret.getData();
    byte[] raw = data == null ? null : data.get(ClusterApi.KUBECONFIG_SECRET_KEY);
    if (raw == null || raw.length == 0) {
      throw new GuestAccessException(
          Reason.KubeconfigSecretMissingValue,
          "kubeconfig Secret %s has no '%s' key"
              .formatted(secretName, ClusterApi.KUBECONFIG_SECRET_KEY));
    }
    String yaml = new String(raw, StandardCharsets.UTF_8);
    List<String> problems = kubeconfigViolations(yaml, settings.allowInsecureTls());
    if (!problems.isEmpty()) {
      throw new GuestAccessException(
          Reason.KubeconfigInvalid,
          "kubeconfig in Secret " + secretName + " refused: " + String.join("; ", problems));
    }
    if (settings.allowInsecureTls() && !kubeconfigViolations(yaml, false).isEmpty()) {
      log.warn(
          "guest kubeconfig relaxes TLS, accepted (--allow-insecure-guest-tls) cluster={}", ref);
    }
    ApiClient client;
    try {
      KubeConfig kc = KubeConfig.loadKubeConfig(new StringReader(yaml));
      client =
          CipherOrder.preferChaCha20(
              ClientCertificates.builder(kc).setReadTimeout(READ_TIMEOUT).build());
    } catch (Exception e) {
      // The parser's and builder's messages may quote the content: name the failure kind only.
      throw new GuestAccessException(
          Reason.KubeconfigInvalid,
          "kubeconfig in Secret %s unusable (%s)"
              .formatted(secretName, e.getClass().getSimpleName()));
    }
    // With no CA data, client-java verifies against the JVM's default trust store (never
    // trust-all) and checks the host name; only insecure-skip-tls-verify turns both off.
    // One connection per tenant identity: its reader on a virtual thread, not a platform one.
    var http =
        ConnectionThreads.virtual(client.getHttpClient().newBuilder())
            .connectTimeout(CONNECT_TIMEOUT);
    client.setHttpClient(http.writeTimeout(READ_TIMEOUT).callTimeout(CALL_TIMEOUT).build());
    return new GuestClient(ref, client, version, tenant.breaker, tenant.throttle, Deadline.NONE);
  }

  private static final Set<String> FORBIDDEN_CLUSTER_KEYS = Set.of("certificate-authority");
  private static final Set<String> FORBIDDEN_USER_KEYS =
      Set.of("client-certificate", "client-key", "tokenFile", "exec", "auth-provider");

  /**
   * Cluster fields that weaken or redirect TLS: skipping verification (a man in the middle then
   * gets the tenant's credentials), a server name other than the server's (the certificate of a
   * different host would be accepted), and a proxy (someone else's host sees the connection).
   */
  static final List<String> TLS_RELAXING_CLUSTER_KEYS =
      List.of("insecure-skip-tls-verify", "tls-server-name", "proxy-url");

  /**
   * What is wrong with a kubeconfig from a Secret (empty: acceptable), never quoting its values. It
   * is untrusted input: only embedded credentials are accepted. File references (which could make
   * us send our own service account token or keys to a tenant's server), exec plugins (which would
   * run commands in our process) and auth providers are refused; so is a cluster that relaxes TLS
   * ({@link #TLS_RELAXING_CLUSTER_KEYS}) unless {@code allowInsecureTls} ({@code
   * --allow-insecure-guest-tls}).
   */
  public static List<String> kubeconfigViolations(String kubeconfigYaml, boolean allowInsecureTls) {
    Object root;
    try {
      root = yaml(kubeconfigYaml);
    } catch (RuntimeException e) {
      return List.of("not valid YAML"); // the parser's message can quote the input
    }
    if (!(root instanceof Map<?, ?> map)) {
      return List.of("not a kubeconfig (top level is not a mapping)");
    }
    List<String> problems = new ArrayList<>();
    List<Map<?, ?>> clusters = bodies(map, "cluster", FORBIDDEN_CLUSTER_KEYS, problems);
    bodies(map, "user", FORBIDDEN_USER_KEYS, problems);
    if (clusters.isEmpty()) {
      problems.add("no clusters");
    }
    for (Map<?, ?> cluster : clusters) {
      for (String key : allowInsecureTls ? List.<String>of() : TLS_RELAXING_CLUSTER_KEYS) {
        Object value = cluster.get(key);
        // insecure-skip-tls-verify: false, or an empty value, changes nothing.
        if (value != null
            && (key.equals("insecure-skip-tls-verify")
                ? !Boolean.FALSE.equals(value)
                : !String.valueOf(value).isBlank())) {
          problems.add(
              ("cluster uses '%s', which relaxes TLS and is not allowed in a guest kubeconfig"
                      + " (unless the controller runs with --allow-insecure-guest-tls)")
                  .formatted(key));
        }
      }
      // Without a scheme client-java falls back to plain http and would send credentials in clear.
      if (!(cluster.get("server") instanceof String s) || !s.startsWith("https://")) {
        problems.add("cluster server is not an https:// URL");
      }
    }
    return problems;
  }

  /** Untrusted YAML, read safely: few aliases, no duplicate keys, at most 1 MiB, plain types. */
  public static Object yaml(String text) {
    LoaderOptions options = new LoaderOptions();
    options.setMaxAliasesForCollections(10);
    options.setAllowDuplicateKeys(false);
    options.setCodePointLimit(1024 * 1024);
    return new Yaml(new SafeConstructor(options)).load(text);
  }

  /**
   * The {@code kind} mappings of a named list ({@code clusters[].cluster}, {@code users[].user}),
   * each key of {@code forbidden} they use added to {@code problems}.
   */
  private static List<Map<?, ?>> bodies(
      Map<?, ?> kubeconfig, String kind, Set<String> forbidden, List<String> problems) {
    List<Map<?, ?>> out = new ArrayList<>();
    if (kubeconfig.get(kind + "s") instanceof List<?> list) {
      for (Object entry : list) {
        if (entry instanceof Map<?, ?> named && named.get(kind) instanceof Map<?, ?> body) {
          out.add(body);
          for (Object key : body.keySet()) {
            if (forbidden.contains(String.valueOf(key))) {
              problems.add(
                  kind + " uses '" + key + "', which is not allowed in a guest kubeconfig");
            }
          }
        }
      }
    }
    return out;
  }

  /** The circuit breaker of a guest cluster: one per cluster, kept across its clients. */
  CircuitBreaker breaker(GuestClusterRef ref) {
    return tenants.computeIfAbsent(ref, Tenant::new).breaker;
  }

  @Override
  public void close() {
    cache.invalidateAll();
  }
}
