package dev.capk.vmieviction.e2e.integration.eviction;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.e2e.harness.TricklingProxy;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The world an eviction IT runs in: the shared infra cluster (test CRDs installed) and guest
 * clusters, a temp dir, the controller's kubeconfig (the identity of {@code config/rbac}), tenants,
 * and the controller itself, started in this JVM:
 *
 * <pre>
 * &#64;RegisterExtension static final EvictionWorld world = EvictionWorld.withGuests("guest-a");
 * ...
 * world.tenant(ns, "tenant", world.guest());
 * world.startController(ns, "--drain-retry-interval", "60s");
 * </pre>
 *
 * A controller started in {@code @BeforeAll} is closed after all tests of the class (after the
 * class's own {@code @AfterAll}); one started in a test, after that test (after its
 * {@code @AfterEach}). After all tests, in this order: trickling proxies, controllers, what {@link
 * #closeAfterAll} was given, namespaces {@link #deleteAfterAll} was given. Clusters keep their
 * names, so classes still share them in one JVM.
 */
final class EvictionWorld
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  /** Infra clusters of this JVM whose test CRDs are installed. */
  private static final Set<LocalCluster> CRDS_INSTALLED =
      Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

  private final LocalClusterExtension infraExt = LocalClusterExtension.shared("infra");
  private final Map<String, LocalClusterExtension> guestExts = new LinkedHashMap<>();
  private final List<Manager> classManagers = new ArrayList<>();
  private final List<Manager> testManagers = new ArrayList<>();
  private final List<String> deleteAfterAll = new ArrayList<>();
  private final List<TricklingProxy> proxies = new ArrayList<>();
  private final List<AutoCloseable> closeAfterAll = new ArrayList<>();
  private boolean inTest;
  private Path dir;
  private Path controllerKubeconfig;

  private EvictionWorld() {}

  /** The infra cluster and these guest clusters, each with every component. */
  static EvictionWorld withGuests(String... names) {
    EvictionWorld world = new EvictionWorld();
    for (String name : names) {
      world.guestExts.put(name, LocalClusterExtension.shared(name));
    }
    return world;
  }

  /** The infra cluster and one guest cluster of its own shape. */
  static EvictionWorld withGuest(String name, UnaryOperator<LocalCluster.Builder> shape) {
    EvictionWorld world = new EvictionWorld();
    world.guestExts.put(name, LocalClusterExtension.shared(name, shape));
    return world;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    infraExt.beforeAll(context);
    for (LocalClusterExtension guest : guestExts.values()) {
      guest.beforeAll(context);
    }
    LocalCluster infra = infra();
    synchronized (CRDS_INSTALLED) {
      if (!CRDS_INSTALLED.contains(infra)) {
        Crds.installTestCrds(infra);
        CRDS_INSTALLED.add(infra);
      }
    }
    dir = EvictionFixture.tempDir("vmi-eviction-" + context.getRequiredTestClass().getSimpleName());
    controllerKubeconfig = null;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    inTest = true;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    inTest = false;
    closeAll(testManagers);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    // The proxies first: a worker still reading from one is let go.
    proxies.forEach(TricklingProxy::close);
    proxies.clear();
    closeAll(classManagers);
    for (AutoCloseable c : closeAfterAll) {
      c.close();
    }
    closeAfterAll.clear();
    for (String ns : deleteAfterAll) {
      infra()
          .kubectl()
          .run(null, Duration.ofSeconds(30), "delete", "namespace", ns, "--wait=false");
    }
    deleteAfterAll.clear();
  }

  /** Closes {@code resource} after all tests of the class, once its controllers are closed. */
  <T extends AutoCloseable> T closeAfterAll(T resource) {
    closeAfterAll.add(resource);
    return resource;
  }

  /**
   * Deletes infra namespace {@code ns} (without waiting) after all tests of the class, once its
   * controllers are closed: other classes share the infra cluster.
   */
  void deleteAfterAll(String ns) {
    deleteAfterAll.add(ns);
  }

  /**
   * KubeVirt's CR, in namespace {@code ns} of its own, setting the cluster-wide eviction strategy;
   * deleted after the class, so that KubeVirt's default is left as it was for other classes.
   */
  void kubeVirtWithStrategy(String ns, String strategy) {
    EvictionFixture.kubeVirtWithStrategy(infra(), ns, strategy);
    deleteAfterAll(ns);
  }

  private static void closeAll(List<Manager> managers) {
    for (Manager m : managers) {
      m.close();
    }
    managers.clear();
  }

  LocalCluster infra() {
    return infraExt.cluster();
  }

  /** The first guest cluster. */
  LocalCluster guest() {
    return guestExts.values().iterator().next().cluster();
  }

  LocalCluster guest(String name) {
    LocalClusterExtension ext = guestExts.get(name);
    if (ext == null) {
      throw new IllegalArgumentException("no guest cluster " + name + " in this world");
    }
    return ext.cluster();
  }

  /** Runs kubectl on the infra cluster (as its admin) and returns its output; fails if it fails. */
  String infraKubectl(String... args) {
    return infra().kubectl().runOrFail(null, args);
  }

  /** Applies {@code yaml} to the infra cluster (as its admin). */
  void infraApply(String yaml) {
    infra().kubectl().apply(yaml);
  }

  /** Applies {@code yaml} to the first guest cluster (as its admin). */
  void guestApply(String yaml) {
    guest().kubectl().apply(yaml);
  }

  /** This class's temp dir. */
  Path dir() {
    return dir;
  }

  /** A kubeconfig of the controller's ServiceAccount ({@code config/rbac}), made once a class. */
  Path controllerKubeconfig() throws Exception {
    if (controllerKubeconfig == null) {
      controllerKubeconfig = EvictionFixture.controllerKubeconfig(infra(), dir);
    }
    return controllerKubeconfig;
  }

  /**
   * A kubeconfig of the controller's ServiceAccount that reaches the infra API server at {@code
   * server} (a proxy) that {@code caPem} signs; each call makes a new one.
   */
  Path controllerKubeconfig(String server, String caPem) throws Exception {
    return EvictionFixture.controllerKubeconfig(
        infra(), Files.createTempDirectory(dir, "proxied"), server, caPem);
  }

  /** A tenant: namespace {@code ns}, its Cluster and the kubeconfig Secret leading to guest. */
  void tenant(String ns, String cluster, LocalCluster guest) {
    tenant(ns, cluster, guest.adminKubeconfigYaml());
  }

  /** A tenant whose kubeconfig Secret holds {@code guestKubeconfig}. */
  void tenant(String ns, String cluster, String guestKubeconfig) {
    EvictionFixture.tenant(infra(), ns, cluster, guestKubeconfig);
  }

  /** A tenant in a new namespace named from {@code prefix}: Cluster "tenant", the first guest. */
  String tenant(String prefix) {
    String ns = EvictionFixture.unique(prefix);
    tenant(ns, "tenant", guest());
    return ns;
  }

  /** Flags written as one command line ({@code "--workers 2 --drain-timeout 30s"}). */
  static String[] flags(String commandLine) {
    return commandLine.trim().split("\\s+");
  }

  /**
   * Two tenants in {@code ns} whose guest clusters are the same real API server (the first guest):
   * {@code trickling}'s kubeconfig leads through a proxy that answers one byte every two seconds.
   * The proxy is closed after the class, before its controllers.
   */
  TricklingProxy tricklingAndHealthyTenants(String ns, String trickling, String healthy) {
    LocalCluster guest = guest();
    TricklingProxy proxy =
        TricklingProxy.start(URI.create(guest.serverUrl()).getPort(), Duration.ofSeconds(2));
    proxies.add(proxy);
    tenant(ns, trickling, guest.adminKubeconfigYaml().replace(guest.serverUrl(), proxy.url()));
    tenant(ns, healthy, guest);
    return proxy;
  }

  /** Starts the controller as its ServiceAccount, watching {@code namespace}, until ready. */
  Manager startController(String namespace, String... extraFlags) throws Exception {
    return startController(controllerKubeconfig(), namespace, extraFlags);
  }

  /** As above, reaching the infra cluster through {@code kubeconfig}. */
  Manager startController(Path kubeconfig, String namespace, String... extraFlags)
      throws Exception {
    return start(kubeconfig, null, namespace, extraFlags);
  }

  /** As above, leader-elected through a short lease named {@code leaseName}. */
  Manager startLeaderElectedController(String leaseName, String namespace, String... extraFlags)
      throws Exception {
    return start(controllerKubeconfig(), leaseName, namespace, extraFlags);
  }

  /** As above, reaching the infra cluster through {@code kubeconfig}. */
  Manager startLeaderElectedController(
      Path kubeconfig, String leaseName, String namespace, String... extraFlags) throws Exception {
    return start(kubeconfig, leaseName, namespace, extraFlags);
  }

  private Manager start(Path kubeconfig, String leaseName, String namespace, String... extraFlags)
      throws Exception {
    List<String> flags = new ArrayList<>(List.of("--namespace", namespace));
    flags.addAll(List.of(extraFlags));
    Manager manager =
        Main.start(
            EvictionFixture.managerArgs(kubeconfig, leaseName, flags.toArray(String[]::new)));
    // Registered before it is ready: a controller that never gets ready is closed too.
    (inTest ? testManagers : classManagers).add(manager);
    Await.until("controller ready", EvictionFixture.WAIT, manager::ready);
    return manager;
  }
}
