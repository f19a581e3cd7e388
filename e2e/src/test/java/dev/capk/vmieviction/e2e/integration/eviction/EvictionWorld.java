package dev.capk.vmieviction.e2e.integration.eviction;

import dev.capk.vmieviction.e2e.harness.Await;
import dev.capk.vmieviction.e2e.harness.Crds;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import dev.capk.vmieviction.e2e.harness.LocalClusterExtension;
import dev.capk.vmieviction.manager.Main;
import dev.capk.vmieviction.manager.Manager;
import java.nio.file.Path;
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
 * {@code @AfterEach}). Clusters keep their names, so classes still share them in one JVM.
 */
final class EvictionWorld
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  /** Infra clusters of this JVM whose test CRDs are installed. */
  private static final Set<LocalCluster> CRDS_INSTALLED =
      Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

  private final LocalClusterExtension infraExt =
      LocalClusterExtension.shared("infra", LocalCluster.Builder::withAll);
  private final Map<String, LocalClusterExtension> guestExts = new LinkedHashMap<>();
  private final List<Manager> classManagers = new ArrayList<>();
  private final List<Manager> testManagers = new ArrayList<>();
  private boolean inTest;
  private Path dir;
  private Path controllerKubeconfig;

  private EvictionWorld() {}

  /** The infra cluster and these guest clusters, each with every component. */
  static EvictionWorld withGuests(String... names) {
    EvictionWorld world = new EvictionWorld();
    for (String name : names) {
      world.guestExts.put(name, LocalClusterExtension.shared(name, LocalCluster.Builder::withAll));
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
  public void afterAll(ExtensionContext context) {
    closeAll(classManagers);
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
