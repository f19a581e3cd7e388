package dev.capk.vmieviction.e2e.kubevirtstandin;

import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.Pki;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

/**
 * The KubeVirt STAND-IN on one infra cluster: its eviction webhook (registered with the API server
 * with its CA bundle), its live migrations and its VM controller. See the package description for
 * what it imitates; it is not KubeVirt.
 */
public final class KubeVirtStandIn implements AutoCloseable {
  static final String WEBHOOK_CONFIGURATION = "kubevirt-standin-eviction";

  private final KubeCluster infra;
  private final EvictionWebhook webhook;
  private final Migrator migrator;
  private final VmController vmController;
  private final MigrationObjects migrationObjects;

  private KubeVirtStandIn(KubeCluster infra, GuestNodeHook guestHook) throws IOException {
    this.infra = infra;
    CoreV1Api core = new CoreV1Api(infra.client());
    KubeVirtObjects kubevirt = new KubeVirtObjects(infra.client());
    LauncherPods launchers = new LauncherPods(core);
    Pki pki = Pki.newAuthority("kubevirt-standin-webhook-ca");
    this.migrator = new Migrator(core, kubevirt, launchers);
    InetAddress bind =
        infra.callbacksArriveOnLoopback()
            ? InetAddress.getLoopbackAddress()
            : new InetSocketAddress(0).getAddress();
    this.webhook =
        new EvictionWebhook(
            core,
            kubevirt,
            migrator,
            Pki.serverContext(
                pki.serving("kubevirt-standin-webhook", List.of(infra.callbackHost()))),
            bind);
    infra.exposeLocalPort(webhook.port());
    this.vmController = new VmController(kubevirt, launchers, migrator, guestHook);
    this.migrationObjects = new MigrationObjects(core, kubevirt, launchers, migrator);
    register(pki.caCertificatePem());
    vmController.start();
    migrationObjects.start();
  }

  /** Starts the stand-in against {@code infra} (which must have the test CRDs installed). */
  public static KubeVirtStandIn start(KubeCluster infra, GuestNodeHook guestHook) {
    try {
      return new KubeVirtStandIn(infra, guestHook);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the KubeVirt stand-in webhook", e);
    }
  }

  private void register(String caPem) {
    String caBundle = Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.US_ASCII));
    infra
        .kubectl()
        .apply(
            """
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingWebhookConfiguration
                metadata:
                  name: %s
                webhooks:
                - name: virt-launcher-eviction-interceptor.standin.kubevirt.io
                  admissionReviewVersions: [v1]
                  sideEffects: NoneOnDryRun
                  failurePolicy: Fail
                  timeoutSeconds: 10
                  clientConfig:
                    url: https://%s%s
                    caBundle: %s
                  rules:
                  - operations: [CREATE]
                    apiGroups: [""]
                    apiVersions: [v1]
                    resources: [pods/eviction]
                    scope: Namespaced
                """
                .formatted(
                    WEBHOOK_CONFIGURATION,
                    hostPort(infra.callbackHost(), webhook.port()),
                    EvictionWebhook.PATH,
                    caBundle));
  }

  private static String hostPort(String host, int port) {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  @Override
  public void close() {
    vmController.close();
    migrationObjects.close();
    migrator.close();
    // Unregister first: with failurePolicy Fail, a webhook that no longer answers would block every
    // eviction.
    infra
        .kubectl()
        .run(
            null,
            java.time.Duration.ofSeconds(30),
            "delete",
            "validatingwebhookconfiguration",
            WEBHOOK_CONFIGURATION,
            "--ignore-not-found");
    webhook.close();
  }
}
