package dev.capk.vmieviction.e2e.integration.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.eviction.InfraVmis;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.manager.ManagementInformers;
import dev.capk.vmieviction.manager.ManagementInformers.Kind;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The controller's VMI informers against real API servers: the first list is a streaming list (the
 * state as a watch's first events) where the server streams, pages of a consistent list where its
 * WatchList feature is off; the selector is applied by the server, and the cache keeps only the
 * metadata the controller reads, whether a VMI arrives by the list or by the watch.
 */
class VmiInformersIT {
  @RegisterExtension
  static final LocalClusterExtension infra = LocalClusterExtension.shared("vmi-informers", b -> b);

  /** Shared with NodeWatchIT by name. */
  @RegisterExtension
  static final LocalClusterExtension listing =
      LocalClusterExtension.shared(
          "no-watchlist", b -> b.apiServerFlag("--feature-gates=WatchList=false"));

  private static final String SELECTOR = "cluster.x-k8s.io/cluster-name";

  /** More than two pages of 500: a paged list must follow two continue tokens. */
  private static final int MANY = 1_100;

  private final List<HttpUrl> requests = new CopyOnWriteArrayList<>();
  private Kind<VirtualMachineInstance> informers;

  @BeforeAll
  static void crds() {
    Crds.installTestCrds(infra.cluster());
    Crds.installTestCrds(listing.cluster());
    LenientJson.install();
  }

  @AfterEach
  void stop() {
    if (informers != null) {
      informers.factories().forEach(SharedInformerFactory::stopAllRegisteredInformers);
    }
  }

  @Test
  void theFirstListIsOneStreamingListThatCachesEveryMatchingVmi() throws Exception {
    String ns = namespace(infra, "streamed");
    createVmis(infra, ns, MANY);
    create(infra, ns, vmi("not-capk", Map.of("app", "other"), Map.of()));

    start(infra, ns);

    assertEquals(List.of(), lists(), "no list request");
    HttpUrl first = requests.get(0);
    assertEquals("true", first.queryParameter("watch"), first.toString());
    assertEquals("true", first.queryParameter("sendInitialEvents"), first.toString());
    assertEquals("NotOlderThan", first.queryParameter("resourceVersionMatch"), first.toString());
    assertNull(first.queryParameter("resourceVersion"), first.toString());
    assertEquals(SELECTOR, first.queryParameter("labelSelector"), first.toString());
    assertAllCached(ns);
  }

  @Test
  void whereTheServerDoesNotStreamTheFirstListIsReadInPagesOf500WithoutResourceVersionZero()
      throws Exception {
    String ns = namespace(listing, "paged");
    createVmis(listing, ns, MANY);
    create(listing, ns, vmi("not-capk", Map.of("app", "other"), Map.of()));

    start(listing, ns);

    assertEquals(
        "true", requests.get(0).queryParameter("sendInitialEvents"), "asked to stream first");
    List<HttpUrl> lists = lists();
    assertEquals(3, lists.size(), "1,100 VMIs in pages of 500: " + lists);
    assertNull(lists.get(0).queryParameter("continue"));
    assertNotNull(lists.get(1).queryParameter("continue"));
    assertNotNull(lists.get(2).queryParameter("continue"));
    for (HttpUrl list : lists) {
      assertEquals("500", list.queryParameter("limit"), list.toString());
      // resourceVersion=0 is answered from the watch cache in one piece, ignoring the limit.
      assertNull(list.queryParameter("resourceVersion"), list.toString());
      assertEquals(SELECTOR, list.queryParameter("labelSelector"), list.toString());
    }
    assertAllCached(ns);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aListedVmiIsCachedWithOnlyTheMetadataTheControllerReads(boolean streamed) throws Exception {
    LocalClusterExtension cluster = streamed ? infra : listing;
    String ns = namespace(cluster, "trim-list");
    create(
        cluster,
        ns,
        vmi(
            "a",
            capkLabels(ns),
            Map.of(
                "capk.cluster.x-k8s.io/vmi-drain-start-time", "2026-01-01T00:00:00Z",
                "capk.cluster.x-k8s.io/evacuation-phase", "Held",
                "kubevirt.io/latest-observed-api-version", "v1")));

    start(cluster, ns);

    assertEquals(streamed, lists().isEmpty(), "streamed: no list request; else a list");
    VirtualMachineInstance cached = informers.find(ns, "a").orElse(null);
    assertNotNull(cached);
    assertOnlyWhatTheControllerReads(
        ns,
        cached.getMetadata(),
        Map.of(
            "capk.cluster.x-k8s.io/vmi-drain-start-time", "2026-01-01T00:00:00Z",
            "capk.cluster.x-k8s.io/evacuation-phase", "Held"));
    assertEquals(
        "External", cached.getSpec().getEvictionStrategy(), "the spec the controller reads stays");
  }

  @Test
  void aVmiChangedAfterTheListIsTrimmedTheSameWay() throws Exception {
    String ns = namespace(infra, "trim-watch");
    create(infra, ns, vmi("a", capkLabels(ns), Map.of()));
    start(infra, ns);
    String before = informers.find(ns, "a").orElseThrow().getMetadata().getResourceVersion();

    InfraVmis.api(infra.cluster().client())
        .patch(
            ns,
            "a",
            V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
            new V1Patch(
                """
                {"metadata":{"annotations":{"capk.cluster.x-k8s.io/vmi-drain-start-time":"2026-02-02T00:00:00Z",
                 "kubevirt.io/latest-observed-api-version":"v1"}}}"""))
        .throwsApiException();
    Await.until(
        "the watch delivers the change",
        Duration.ofSeconds(30),
        () ->
            !before.equals(
                informers.find(ns, "a").orElseThrow().getMetadata().getResourceVersion()));

    assertOnlyWhatTheControllerReads(
        ns,
        informers.find(ns, "a").orElseThrow().getMetadata(),
        Map.of("capk.cluster.x-k8s.io/vmi-drain-start-time", "2026-02-02T00:00:00Z"));
  }

  @Test
  void aNamespaceWithoutVmisSyncsToAnEmptyCacheFromOneStreamingList() throws Exception {
    String ns = namespace(infra, "empty");

    start(infra, ns);

    assertTrue(informers.hasSynced());
    assertNull(informers.find(ns, "vmi-0").orElse(null));
    assertEquals(List.of(), lists());
  }

  /** The requests that were not watches: list pages. */
  private List<HttpUrl> lists() {
    return requests.stream().filter(u -> !"true".equals(u.queryParameter("watch"))).toList();
  }

  private void assertAllCached(String ns) {
    for (int i = 0; i < MANY; i++) {
      assertNotNull(informers.find(ns, "vmi-" + i).orElse(null), "vmi-" + i + " cached");
    }
    assertNull(
        informers.find(ns, "not-capk").orElse(null), "the label selector is applied by the server");
  }

  private static void assertOnlyWhatTheControllerReads(
      String ns, V1ObjectMeta m, Map<String, String> annotations) {
    assertEquals("a", m.getName());
    assertEquals(ns, m.getNamespace());
    assertNotNull(m.getUid());
    assertNotNull(m.getResourceVersion());
    assertEquals(
        Map.of(
            "cluster.x-k8s.io/cluster-name",
            "c1",
            "capk.cluster.x-k8s.io/kubevirt-machine-namespace",
            ns,
            // The admit step tells control-plane VMIs from workers by it.
            "cluster.x-k8s.io/role",
            "worker"),
        m.getLabels());
    assertEquals(annotations, m.getAnnotations());
    assertTrue(
        m.getManagedFields() == null || m.getManagedFields().isEmpty(), "managedFields dropped");
    assertTrue(m.getFinalizers() == null || m.getFinalizers().isEmpty(), "finalizers dropped");
    assertTrue(
        m.getOwnerReferences() == null || m.getOwnerReferences().isEmpty(),
        "owner references dropped");
    assertNull(m.getGeneration());
    assertNull(m.getCreationTimestamp());
  }

  /** Informers on {@code ns} through a client that records each request the informer makes. */
  private void start(LocalClusterExtension cluster, String ns) {
    ApiClient watchClient = cluster.cluster().informerClient();
    watchClient.setHttpClient(
        watchClient
            .getHttpClient()
            .newBuilder()
            .addInterceptor(
                chain -> {
                  requests.add(chain.request().url());
                  return chain.proceed(chain.request());
                })
            .build());
    informers = ManagementInformers.vmis(watchClient, List.of(ns), SELECTOR, Duration.ZERO, null);
    informers.factories().forEach(SharedInformerFactory::startAllRegisteredInformers);
    Await.until("VMI informer synced", Duration.ofSeconds(60), informers::hasSynced);
  }

  private static String namespace(LocalClusterExtension cluster, String prefix) throws Exception {
    String name = prefix + "-" + Long.toString(System.nanoTime(), 36);
    new CoreV1Api(cluster.cluster().client())
        .createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(name)))
        .execute();
    return name;
  }

  private static Map<String, String> capkLabels(String ns) {
    return Map.of(
        "cluster.x-k8s.io/cluster-name",
        "c1",
        "capk.cluster.x-k8s.io/kubevirt-machine-namespace",
        ns,
        "kubevirt.io/vm",
        "a",
        "cluster.x-k8s.io/role",
        "worker");
  }

  /** A VMI carrying what KubeVirt and CAPK put on one; managedFields come from the API server. */
  private static Map<String, Object> vmi(
      String name, Map<String, String> labels, Map<String, String> annotations) {
    return Map.of(
        "apiVersion",
        KubeVirtApi.GROUP + "/" + KubeVirtApi.VERSION,
        "kind",
        "VirtualMachineInstance",
        "metadata",
        Map.of(
            "name",
            name,
            "labels",
            labels,
            "annotations",
            annotations,
            // Nothing deletes these VMIs (no controller-manager runs here): the finalizer stays
            // harmless.
            "finalizers",
            List.of("kubevirt.io/virtualMachineControllerFinalize"),
            "ownerReferences",
            List.of(
                Map.of(
                    "apiVersion",
                    "kubevirt.io/v1",
                    "kind",
                    "VirtualMachine",
                    "name",
                    name,
                    "uid",
                    "00000000-0000-0000-0000-000000000001"))),
        "spec",
        Map.of("evictionStrategy", "External", "domain", Map.of("devices", Map.of())));
  }

  private static void create(LocalClusterExtension cluster, String ns, Map<String, Object> body)
      throws Exception {
    new CustomObjectsApi(cluster.cluster().client())
        .createNamespacedCustomObject(
            KubeVirtApi.GROUP, KubeVirtApi.VERSION, ns, KubeVirtApi.VMI_PLURAL, body)
        .execute();
  }

  /** {@code count} labelled VMIs, created concurrently: a few seconds instead of a minute. */
  private static void createVmis(LocalClusterExtension cluster, String ns, int count)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> created = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String name = "vmi-" + i;
        created.add(
            pool.submit(
                () -> {
                  create(cluster, ns, vmi(name, capkLabels(ns), Map.of()));
                  return null;
                }));
      }
      for (Future<?> f : created) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
