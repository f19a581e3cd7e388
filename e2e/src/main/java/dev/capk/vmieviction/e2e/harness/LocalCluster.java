package dev.capk.vmieviction.e2e.harness;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A real Kubernetes control plane run as local processes: etcd and kube-apiserver (TLS, RBAC, an
 * admin identity in system:masters, service-account signing keys), and on request
 * kube-controller-manager, kube-scheduler and kwok (which plays the kubelets). Several can run side
 * by side; each has its own ports, data, logs and kubeconfig under {@link RepoPaths#workDir()}.
 */
public final class LocalCluster implements KubeCluster {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final int START_ATTEMPTS = 3;

  /** The controller-manager creates the default ServiceAccount within a few seconds of starting. */
  private static final Duration SERVICE_ACCOUNT_WAIT = Duration.ofSeconds(45);

  private final String name;
  private final boolean controllerManager;
  private final boolean scheduler;
  private final boolean kwok;
  private final List<String> extraApiServerFlags;
  private final KubeBinaries binaries;
  private final ClusterFiles files;
  private final Pki pki;
  private final List<ManagedProcess> processes = new ArrayList<>();

  private int etcdPort;
  private int apiServerPort;
  private ManagedProcess etcd;
  private ManagedProcess apiServer;
  private List<String> apiServerCommand;
  private ApiClient client;
  private Duration startDuration;

  private LocalCluster(Builder b) {
    this.name = b.name;
    this.controllerManager = b.controllerManager;
    this.scheduler = b.scheduler;
    this.kwok = b.kwok;
    this.extraApiServerFlags = List.copyOf(b.extraApiServerFlags);
    this.binaries = KubeBinaries.locate();
    this.files = ClusterFiles.fresh(RepoPaths.workDir().resolve(name));
    this.pki = Pki.newAuthority(name + "-ca");
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** Which components to run besides etcd and kube-apiserver. */
  public static final class Builder {
    private final String name;
    private boolean controllerManager;
    private boolean scheduler;
    private boolean kwok;
    private final List<String> extraApiServerFlags = new ArrayList<>();

    private Builder(String name) {
      if (!name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")) {
        throw new IllegalArgumentException("cluster name must be a DNS label, got '" + name + "'");
      }
      this.name = name;
    }

    public Builder withControllerManager() {
      controllerManager = true;
      return this;
    }

    public Builder withScheduler() {
      scheduler = true;
      return this;
    }

    public Builder withKwok() {
      kwok = true;
      return this;
    }

    /**
     * An extra kube-apiserver flag, e.g. {@code --feature-gates=...} or an admission webhook
     * setting.
     */
    public Builder apiServerFlag(String flag) {
      extraApiServerFlags.add(flag);
      return this;
    }

    /** kube-controller-manager, kube-scheduler and kwok: a cluster that runs workloads. */
    public Builder withAll() {
      return withControllerManager().withScheduler().withKwok();
    }

    /** A description used to tell whether two requests for a shared cluster agree. */
    String shape() {
      return name
          + "[cm="
          + controllerManager
          + ",sched="
          + scheduler
          + ",kwok="
          + kwok
          + ",flags="
          + extraApiServerFlags
          + "]";
    }

    public LocalCluster start() {
      LocalCluster cluster = new LocalCluster(this);
      try {
        cluster.startAll();
        return cluster;
      } catch (RuntimeException | Error e) {
        cluster.close();
        throw e;
      }
    }
  }

  private void startAll() {
    long began = System.nanoTime();
    writePki();
    startEtcdAndApiServer();
    // The other components need only the API server: launched together, then each awaited.
    Launched manager = controllerManager ? launchControllerManager() : null;
    Launched sched = scheduler ? launchScheduler() : null;
    if (kwok) {
      startKwok();
    }
    if (manager != null) {
      awaitDefaultServiceAccount(awaitHealthy(manager, this::launchControllerManager));
    }
    if (sched != null) {
      awaitHealthy(sched, this::launchScheduler);
    }
    startDuration = Duration.ofNanos(System.nanoTime() - began);
    // Printed, not asserted: start-up time is worth watching, never a test verdict.
    System.out.printf(
        "harness: cluster %s ready in %d ms (%s)%n", name, startDuration.toMillis(), components());
  }

  private void writePki() {
    try {
      Pki.write(files.caCert(), pki.caCertificatePem());
      Pki.Issued serving =
          pki.serving(
              "kube-apiserver",
              List.of("kubernetes", "kubernetes.default", "kubernetes.default.svc"));
      Pki.write(files.servingCert(), serving.certificatePem());
      Pki.write(files.servingKey(), serving.privateKeyPem());
      Pki.Issued sa = Pki.serviceAccountKey();
      Pki.write(files.serviceAccountPublicKey(), sa.certificatePem());
      Pki.write(files.serviceAccountPrivateKey(), sa.privateKeyPem());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the PKI of cluster " + name, e);
    }
  }

  /** etcd and kube-apiserver, on fresh ports, retried when a port was taken in between. */
  private void startEtcdAndApiServer() {
    for (int attempt = 1; ; attempt++) {
      etcdPort = FreePorts.next();
      int peerPort = FreePorts.next();
      apiServerPort = FreePorts.next();
      etcd = launch("etcd", etcdCommand(peerPort));
      try {
        ComponentHealth.await(
            etcd, () -> ComponentHealth.httpOk("http://127.0.0.1:" + etcdPort + "/health"));
        writeAdminKubeconfig();
        apiServerCommand = apiServerCommand();
        apiServer = launch("kube-apiserver", apiServerCommand);
        ComponentHealth.await(apiServer, this::apiServerReady);
        return;
      } catch (IllegalStateException e) {
        boolean collision =
            ComponentHealth.portCollision(etcd)
                || (apiServer != null && ComponentHealth.portCollision(apiServer));
        stopProcesses();
        if (!collision || attempt == START_ATTEMPTS) {
          throw e;
        }
        System.out.printf(
            "harness: cluster %s: port taken, retrying with new ports (attempt %d)%n",
            name, attempt + 1);
        files.resetEtcdData();
      }
    }
  }

  private List<String> etcdCommand(int peerPort) {
    String client = "http://127.0.0.1:" + etcdPort;
    String peer = "http://127.0.0.1:" + peerPort;
    return List.of(
        binaries.path("etcd").toString(),
        "--name=" + name,
        "--data-dir=" + files.etcdData(),
        "--listen-client-urls=" + client,
        "--advertise-client-urls=" + client,
        "--listen-peer-urls=" + peer,
        "--initial-advertise-peer-urls=" + peer,
        "--initial-cluster=" + name + "=" + peer,
        "--log-level=warn",
        // Test data: durability across machine crashes is not needed, speed is.
        "--unsafe-no-fsync=true",
        "--quota-backend-bytes=4294967296");
  }

  private List<String> apiServerCommand() {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                binaries.path("kube-apiserver").toString(),
                "--etcd-servers=http://127.0.0.1:" + etcdPort,
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--secure-port=" + apiServerPort,
                "--tls-cert-file=" + files.servingCert(),
                "--tls-private-key-file=" + files.servingKey(),
                "--client-ca-file=" + files.caCert(),
                "--service-account-key-file=" + files.serviceAccountPublicKey(),
                "--service-account-signing-key-file=" + files.serviceAccountPrivateKey(),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--authorization-mode=RBAC",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--allow-privileged=true",
                // A loopback address cannot be published as the kubernetes Service's endpoint.
                "--endpoint-reconciler-type=none",
                "--profiling=false",
                "--cert-dir=" + files.dir().resolve("pki")));
    if (!controllerManager) {
      // Without the controller-manager nobody creates the "default" ServiceAccount that this plugin
      // requires of every pod.
      cmd.add("--disable-admission-plugins=ServiceAccount");
    }
    cmd.addAll(extraApiServerFlags);
    return cmd;
  }

  /** A component launched on a fresh port, and the health endpoint that says it is up. */
  private record Launched(ManagedProcess process, String healthUrl) {}

  private Launched launchControllerManager() {
    return launchComponent(
        "kube-controller-manager",
        "--service-account-private-key-file=" + files.serviceAccountPrivateKey(),
        "--root-ca-file=" + files.caCert(),
        "--use-service-account-credentials=false");
  }

  private Launched launchScheduler() {
    return launchComponent("kube-scheduler");
  }

  /**
   * A control-plane component on the admin kubeconfig, without leader election, on a fresh port.
   */
  private Launched launchComponent(String component, String... flags) {
    int port = FreePorts.next();
    List<String> command =
        new ArrayList<>(
            List.of(
                binaries.path(component).toString(),
                "--kubeconfig=" + files.adminKubeconfig(),
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                "--secure-port=" + port,
                "--profiling=false"));
    command.addAll(List.of(flags));
    return new Launched(launch(component, command), "https://127.0.0.1:" + port + "/healthz");
  }

  /**
   * Pods need the "default" ServiceAccount, which the controller-manager creates. Twice in a few
   * hundred starts a healthy controller-manager created none within 90 s (its log was lost then):
   * after {@link #SERVICE_ACCOUNT_WAIT} its last lines are printed and it is started once more.
   */
  private void awaitDefaultServiceAccount(Launched manager) {
    try {
      awaitDefaultServiceAccount(SERVICE_ACCOUNT_WAIT);
      return;
    } catch (AssertionError e) {
      System.out.printf(
          "harness: cluster %s: no default ServiceAccount after %d s, kube-controller-manager"
              + " started again; its last lines:%n%s%n",
          name,
          SERVICE_ACCOUNT_WAIT.toSeconds(),
          ProcessLogs.tail(files.log("kube-controller-manager"), 40));
    }
    manager.process().stop(Duration.ofSeconds(5));
    processes.remove(manager.process());
    awaitHealthy(launchControllerManager(), this::launchControllerManager);
    awaitDefaultServiceAccount(START_TIMEOUT);
  }

  private void awaitDefaultServiceAccount(Duration timeout) {
    Await.until(
        "the default ServiceAccount in cluster " + name,
        timeout,
        () -> {
          new CoreV1Api(client()).readNamespacedServiceAccount("default", "default").execute();
          return true;
        });
  }

  /**
   * Waits until {@code first} is healthy, launching it again on new ports after a collision;
   * returns the launch that is healthy.
   */
  private Launched awaitHealthy(Launched first, java.util.function.Supplier<Launched> relaunch) {
    Launched component = first;
    for (int attempt = 1; !startComponent(component.process(), component.healthUrl(), attempt); ) {
      attempt++;
      component = relaunch.get();
    }
    return component;
  }

  private void startKwok() {
    processes.add(
        KwokProcess.start(
            binaries, files.adminKubeconfig(), KwokNodes.LOCAL_KWOK, files.log("kwok")));
  }

  /** Waits for a component's health endpoint; false means a port collision worth retrying. */
  private boolean startComponent(ManagedProcess p, String healthUrl, int attempt) {
    try {
      ComponentHealth.await(p, () -> ComponentHealth.httpOk(healthUrl));
      return true;
    } catch (IllegalStateException e) {
      boolean retry = ComponentHealth.portCollision(p) && attempt < START_ATTEMPTS;
      p.stop(Duration.ofSeconds(5));
      processes.remove(p);
      if (!retry) {
        throw e;
      }
      return false;
    }
  }

  private ManagedProcess launch(String component, List<String> command) {
    ManagedProcess p = ManagedProcess.start(component, command, files.log(component), Map.of());
    processes.add(p);
    return p;
  }

  private boolean apiServerReady() throws IOException {
    Request request = new Request.Builder().url(serverUrl() + "/readyz").get().build();
    try (Response response = client().getHttpClient().newCall(request).execute()) {
      return response.code() == 200;
    }
  }

  private void writeAdminKubeconfig() {
    try {
      Pki.write(files.adminKubeconfig(), adminKubeconfigYaml());
      client = null;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the kubeconfig of cluster " + name, e);
    }
  }

  private String cachedAdminKubeconfig;

  /** The admin kubeconfig (user "admin" in group system:masters), credentials embedded. */
  @Override
  public synchronized String adminKubeconfigYaml() {
    if (cachedAdminKubeconfig == null || !cachedAdminKubeconfig.contains(serverUrl())) {
      cachedAdminKubeconfig =
          Kubeconfigs.withClientCertificate(
              name,
              serverUrl(),
              pki.caCertificatePem(),
              pki.client("admin", "system:masters"),
              "admin");
    }
    return cachedAdminKubeconfig;
  }

  /**
   * A kubeconfig for another identity of this cluster (a client certificate for {@code user} in
   * {@code group}).
   */
  public String kubeconfigFor(String user, String group) {
    return Kubeconfigs.withClientCertificate(
        name, serverUrl(), pki.caCertificatePem(), pki.client(user, group), user);
  }

  /** A kubeconfig that authenticates with a bearer token, e.g. a ServiceAccount's. */
  @Override
  public String kubeconfigWithToken(String user, String token) {
    return Kubeconfigs.withToken(name, serverUrl(), pki.caCertificatePem(), token, user);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String serverUrl() {
    return "https://127.0.0.1:" + apiServerPort;
  }

  @Override
  public String caCertificatePem() {
    return pki.caCertificatePem();
  }

  @Override
  public Path kubeconfig() {
    return files.adminKubeconfig();
  }

  @Override
  public Path dir() {
    return files.dir();
  }

  public KubeBinaries binaries() {
    return binaries;
  }

  @Override
  public Kubectl kubectl() {
    return new Kubectl(binaries.kubectl(), kubeconfig());
  }

  @Override
  public KwokNodes kwokNodes() {
    if (!kwok) {
      throw new IllegalStateException(
          "cluster " + name + " runs without kwok: build it withKwok()");
    }
    return new KwokNodes(client(), KwokNodes.LOCAL_KWOK);
  }

  @Override
  public String callbackHost() {
    return "127.0.0.1";
  }

  public Optional<Duration> startDuration() {
    return Optional.ofNullable(startDuration);
  }

  /** An admin client of the official Java client (read timeout long enough for watches). */
  @Override
  public synchronized ApiClient client() {
    if (client == null) {
      try {
        client =
            ClientBuilder.kubeconfig(
                    KubeConfig.loadKubeConfig(new StringReader(adminKubeconfigYaml())))
                .build();
        client.setHttpClient(
            client.getHttpClient().newBuilder().readTimeout(5, TimeUnit.MINUTES).build());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot build a client for cluster " + name, e);
      }
    }
    return client;
  }

  /**
   * A new admin client without a read timeout, as the client's informers require for their watches.
   */
  @Override
  public ApiClient informerClient() {
    try {
      ApiClient c =
          ClientBuilder.kubeconfig(
                  KubeConfig.loadKubeConfig(new StringReader(adminKubeconfigYaml())))
              .build();
      c.setHttpClient(c.getHttpClient().newBuilder().readTimeout(0, TimeUnit.MILLISECONDS).build());
      return c;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build a client for cluster " + name, e);
    }
  }

  /** PIDs of every process this cluster runs now. */
  public List<Long> pids() {
    return processes.stream().filter(ManagedProcess::isAlive).map(ManagedProcess::pid).toList();
  }

  /** The processes this cluster started (alive or not), in start order. */
  public List<ManagedProcess> processes() {
    return List.copyOf(processes);
  }

  public String components() {
    List<String> names = new ArrayList<>(List.of("etcd", "kube-apiserver"));
    if (controllerManager) names.add("kube-controller-manager");
    if (scheduler) names.add("kube-scheduler");
    if (kwok) names.add("kwok");
    return String.join(", ", names);
  }

  /** Stops kube-apiserver and starts it again on the same port and etcd (an API server outage). */
  public void restartApiServer(Duration downtime) {
    apiServer.stop(Duration.ofSeconds(10));
    processes.remove(apiServer);
    sleep(downtime);
    apiServer = launch("kube-apiserver", apiServerCommand);
    ComponentHealth.await(apiServer, this::apiServerReady);
  }

  /**
   * Stops kube-apiserver only (etcd and the other components keep running): the cluster's API is
   * dead until {@link #startApiServer()}.
   */
  public synchronized void stopApiServer() {
    if (apiServer == null) {
      return;
    }
    apiServer.stop(Duration.ofSeconds(10));
    processes.remove(apiServer);
    apiServer = null;
  }

  /**
   * Starts kube-apiserver again after {@link #stopApiServer()}, on the same port and etcd, and
   * waits until it is ready.
   */
  public synchronized void startApiServer() {
    if (apiServer != null && apiServer.isAlive()) {
      return;
    }
    apiServer = launch("kube-apiserver", apiServerCommand);
    ComponentHealth.await(apiServer, this::apiServerReady);
  }

  /** Stops every process this cluster started, newest first, and waits until each is gone. */
  @Override
  public void close() {
    stopProcesses();
  }

  private void stopProcesses() {
    List<ManagedProcess> reversed = new ArrayList<>(processes);
    java.util.Collections.reverse(reversed);
    // Every component but etcd is asked at once, so their shutdowns overlap (the API server's
    // alone takes about a second; 95 clusters stop in a run). etcd goes last, once the API server
    // is gone: asked together, each waits seconds on the other (10 s a cluster, measured).
    reversed.stream().filter(p -> p != etcd).forEach(ManagedProcess::askToStop);
    for (ManagedProcess p : reversed) {
      p.stop(Duration.ofSeconds(10));
    }
    processes.clear();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
