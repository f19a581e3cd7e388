package dev.capk.vmieviction.e2e.harness;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A cluster this harness did not start, given by an admin kubeconfig file (for example one that
 * {@code kind get kubeconfig} prints). The harness adds only a kwok process of its own, which plays
 * the kubelets of the nodes the scenarios create there (and never touches any other node), and
 * removes those nodes again when it stops.
 */
public final class ExistingCluster implements KubeCluster {
  /**
   * Kubeconfig keys that point at files or programs: a Secret holding the text could not use them.
   */
  private static final Pattern NOT_EMBEDDED =
      Pattern.compile(
          "(?m)^\\s*(certificate-authority|client-certificate|client-key|tokenFile|exec|auth-provider)\\s*:");

  private final String name;
  private final String kubeconfigYaml;
  private final String serverUrl;
  private final String caPem;
  private final String webhookHost;
  private final Path dir;
  private final Path kubeconfig;
  private final String kwokSelector;
  private final ManagedProcess kwok;
  private ApiClient client;

  private ExistingCluster(String name, String kubeconfigYaml, String webhookHost) {
    this.name = name;
    this.kubeconfigYaml = kubeconfigYaml;
    this.webhookHost = webhookHost;
    KubeConfig parsed = parse(name, kubeconfigYaml);
    this.serverUrl = parsed.getServer();
    String caData = parsed.getCertificateAuthorityData();
    if (serverUrl == null || serverUrl.isBlank()) {
      throw new IllegalArgumentException(
          "kubeconfig of cluster " + name + ": its current context names no server");
    }
    if (caData == null || caData.isBlank()) {
      throw new IllegalArgumentException(
          "kubeconfig of cluster "
              + name
              + ": no certificate-authority-data; the"
              + " scenarios give the controller kubeconfigs of their own, which need the cluster's CA embedded");
    }
    this.caPem =
        new String(java.util.Base64.getDecoder().decode(caData.strip()), StandardCharsets.US_ASCII);
    this.dir = RepoPaths.workDir().resolve(name);
    this.kubeconfig = dir.resolve("admin.kubeconfig");
    try {
      Files.createDirectories(dir.resolve("logs"));
      Pki.write(kubeconfig, kubeconfigYaml);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare " + dir, e);
    }
    this.kwokSelector = "capk-e2e-" + name;
    awaitReachable();
    this.kwok =
        KwokProcess.start(
            KubeBinaries.locate(), kubeconfig, kwokSelector, dir.resolve("logs/kwok.log"));
  }

  /**
   * The cluster of the admin kubeconfig at {@code file}.
   *
   * @param webhookHost the host name or IP by which that cluster's API server reaches this machine
   *     (127.0.0.1 when it runs here as a process; for kind, the Docker network's gateway)
   */
  public static ExistingCluster fromKubeconfig(String name, Path file, String webhookHost) {
    if (!Files.isReadable(file)) {
      throw new IllegalArgumentException(
          "kubeconfig of cluster " + name + " not readable: " + file);
    }
    try {
      return fromKubeconfigYaml(name, Files.readString(file), webhookHost);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot read the kubeconfig of cluster " + name + " at " + file, e);
    }
  }

  /** As {@link #fromKubeconfig}, from the kubeconfig's text. */
  public static ExistingCluster fromKubeconfigYaml(
      String name, String kubeconfigYaml, String webhookHost) {
    return new ExistingCluster(name, kubeconfigYaml, webhookHost);
  }

  private static KubeConfig parse(String name, String yaml) {
    if (NOT_EMBEDDED.matcher(yaml).find()) {
      throw new IllegalArgumentException(
          "kubeconfig of cluster "
              + name
              + " refers to files or plugins for its"
              + " credentials; give one with the credentials embedded (e.g. `kind get kubeconfig --name X`)");
    }
    try {
      return KubeConfig.loadKubeConfig(new StringReader(yaml));
    } catch (RuntimeException e) {
      // The parser's message may quote the input, credentials included: name only the cluster.
      throw new IllegalArgumentException(
          "kubeconfig of cluster "
              + name
              + " is not a valid kubeconfig ("
              + e.getClass().getSimpleName()
              + ")");
    }
  }

  private void awaitReachable() {
    Await.until(
        "the API server of cluster " + name + " at " + serverUrl + " to answer",
        Duration.ofSeconds(60),
        () -> {
          new CoreV1Api(client()).listNode().limit(1).execute();
          return true;
        });
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String serverUrl() {
    return serverUrl;
  }

  @Override
  public String caCertificatePem() {
    return caPem;
  }

  @Override
  public Path kubeconfig() {
    return kubeconfig;
  }

  @Override
  public String adminKubeconfigYaml() {
    return kubeconfigYaml;
  }

  @Override
  public Path dir() {
    return dir;
  }

  @Override
  public Kubectl kubectl() {
    return new Kubectl(KubeBinaries.locate().kubectl(), kubeconfig);
  }

  @Override
  public KwokNodes kwokNodes() {
    return new KwokNodes(client(), kwokSelector);
  }

  @Override
  public synchronized ApiClient client() {
    if (client == null) {
      client = newClient(Duration.ofMinutes(5));
    }
    return client;
  }

  @Override
  public ApiClient informerClient() {
    return newClient(Duration.ZERO);
  }

  private ApiClient newClient(Duration readTimeout) {
    try {
      ApiClient c =
          ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(new StringReader(kubeconfigYaml)))
              .build();
      c.setHttpClient(
          c.getHttpClient()
              .newBuilder()
              .readTimeout(readTimeout.toMillis(), TimeUnit.MILLISECONDS)
              .build());
      return c;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build a client for cluster " + name, e);
    }
  }

  @Override
  public String callbackHost() {
    return webhookHost;
  }

  @Override
  public boolean callbacksArriveOnLoopback() {
    return webhookHost.equals("127.0.0.1")
        || webhookHost.equals("localhost")
        || webhookHost.equals("::1");
  }

  /** PIDs of the processes the harness started for this cluster. */
  public List<Long> pids() {
    return kwok.isAlive() ? List.of(kwok.pid()) : List.of();
  }

  /**
   * Removes the kwok nodes this harness created (they would stay NotReady), then stops its kwok.
   */
  @Override
  public void close() {
    CoreV1Api core = new CoreV1Api(client());
    try {
      for (V1Node n : core.listNode().execute().getItems()) {
        var annotations = n.getMetadata().getAnnotations();
        if (annotations != null
            && kwokSelector.equals(annotations.get(KwokNodes.MANAGED_ANNOTATION))) {
          core.deleteNode(n.getMetadata().getName()).execute();
        }
      }
    } catch (ApiException e) {
      System.out.printf(
          "harness: cluster %s: could not remove its kwok nodes: HTTP %d%n", name, e.getCode());
    }
    kwok.stop(Duration.ofSeconds(10));
  }
}
