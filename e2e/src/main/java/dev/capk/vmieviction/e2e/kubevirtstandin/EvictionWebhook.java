package dev.capk.vmieviction.e2e.kubevirtstandin;

import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.capk.vmieviction.e2e.harness.AdmissionReviews;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stand-in for KubeVirt's virt-launcher eviction admission webhook (HTTPS on loopback). For the
 * eviction of a VMI's current virt-launcher pod: External marks the VMI for evacuation ({@code
 * status.evacuationNodeName}) and answers 429; LiveMigrate does the same and starts a migration;
 * None (or an unknown strategy) lets the eviction through.
 */
final class EvictionWebhook implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EvictionWebhook.class);
  static final String PATH = "/pods/eviction";

  private final CoreV1Api core;
  private final KubeVirtObjects kubevirt;
  private final Migrator migrator;
  private final HttpsServer server;
  private final ExecutorService executor =
      Executors.newFixedThreadPool(
          4,
          r -> {
            Thread t = new Thread(r, "standin-webhook");
            t.setDaemon(true);
            return t;
          });

  /**
   * @param bind where to listen: loopback, or every interface when the API server calls from
   *     another host
   */
  EvictionWebhook(
      CoreV1Api core, KubeVirtObjects kubevirt, Migrator migrator, SSLContext tls, InetAddress bind)
      throws IOException {
    this.core = core;
    this.kubevirt = kubevirt;
    this.migrator = migrator;
    this.server = HttpsServer.create(new InetSocketAddress(bind, 0), 64);
    server.setHttpsConfigurator(new HttpsConfigurator(tls));
    server.createContext(PATH, this::handle);
    server.setExecutor(executor);
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  private void handle(HttpExchange exchange) throws IOException {
    JsonObject request = AdmissionReviews.request(exchange);
    JsonObject response;
    try {
      Optional<String> denial = decide(request);
      response = AdmissionReviews.response(request, denial.isEmpty());
      if (denial.isPresent()) {
        response.add("status", status(429, "TooManyRequests", denial.get()));
      }
    } catch (ApiException | RuntimeException e) {
      LOG.warn("stand-in webhook failed: {}", e.toString());
      response = AdmissionReviews.response(request, false);
      response.add(
          "status", status(500, null, "KubeVirt stand-in webhook error: " + e.getMessage()));
    }
    AdmissionReviews.answer(exchange, response);
  }

  private static JsonObject status(int code, String reason, String message) {
    JsonObject status = new JsonObject();
    status.addProperty("code", code);
    if (reason != null) {
      status.addProperty("reason", reason);
    }
    status.addProperty("message", message);
    return status;
  }

  /** Empty: allow. A message: deny with 429. */
  private Optional<String> decide(JsonObject request) throws ApiException {
    String namespace = request.get("namespace").getAsString();
    String podName = request.get("name").getAsString();
    boolean dryRun = request.has("dryRun") && request.get("dryRun").getAsBoolean();
    V1Pod pod;
    try {
      pod = core.readNamespacedPod(podName, namespace).execute();
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
    if (!LauncherPods.LAUNCHER_VALUE.equals(label(pod, LauncherPods.LAUNCHER_LABEL))) {
      return Optional.empty();
    }
    Optional<V1OwnerReference> owner =
        pod.getMetadata().getOwnerReferences() == null
            ? Optional.empty()
            : pod.getMetadata().getOwnerReferences().stream()
                .filter(o -> "VirtualMachineInstance".equals(o.getKind()))
                .findFirst();
    if (owner.isEmpty()) {
      return Optional.empty();
    }
    Optional<DynamicKubernetesObject> found;
    try {
      found = kubevirt.vmi(namespace, owner.get().getName());
    } catch (ApiException e) {
      // KubeVirt's pod-eviction-admitter.go denies with 429 when it cannot read the VMI ("kubevirt
      // failed getting the vmi"): the eviction is retried, never let through unmarked.
      return Optional.of("kubevirt failed getting the vmi: " + e.getMessage());
    }
    if (found.isEmpty()
        || !found.get().getMetadata().getUid().equals(owner.get().getUid())
        || found.get().getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    DynamicKubernetesObject vmi = found.get();
    String node = pod.getSpec().getNodeName();
    boolean currentPod =
        node != null && node.equals(Vmi.string(vmi.getRaw(), "status", "nodeName").orElse(null));
    String strategy =
        Vmi.effectiveEvictionStrategy(vmi.getRaw(), kubevirt.clusterEvictionStrategy());
    if (!currentPod) {
      return Optional.empty();
    }
    switch (strategy) {
      case "External":
        if (!dryRun) {
          markForEvacuation(vmi, node);
        }
        return Optional.of(
            "Eviction triggered evacuation of VMI "
                + namespace
                + "/"
                + vmi.getMetadata().getName());
      case "LiveMigrate":
      case "LiveMigrateIfPossible":
        if (!dryRun) {
          markForEvacuation(vmi, node);
          migrator.migrate(vmi, pod);
        }
        return Optional.of(
            "Eviction triggered evacuation of VMI "
                + namespace
                + "/"
                + vmi.getMetadata().getName());
      default:
        return Optional.empty();
    }
  }

  private void markForEvacuation(DynamicKubernetesObject vmi, String node) throws ApiException {
    if (node.equals(Vmi.string(vmi.getRaw(), "status", "evacuationNodeName").orElse(null))) {
      return;
    }
    JsonObject status = new JsonObject();
    status.addProperty("evacuationNodeName", node);
    kubevirt.patchVmiStatus(vmi.getMetadata().getNamespace(), vmi.getMetadata().getName(), status);
    LOG.info(
        "stand-in: VMI {}/{} marked for evacuation from {}",
        vmi.getMetadata().getNamespace(),
        vmi.getMetadata().getName(),
        node);
  }

  private static String label(V1Pod pod, String key) {
    return pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(key);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
