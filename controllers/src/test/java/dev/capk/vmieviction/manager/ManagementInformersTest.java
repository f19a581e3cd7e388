package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.capi.ClusterApi;
import dev.capk.vmieviction.api.capk.KubevirtMachine;
import io.kubernetes.client.openapi.models.V1ManagedFieldsEntry;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ManagementInformersTest {

  @Test
  void aRefusedListIsNotSentAgainBeforeThePauseAndAGrantIsSeenAfterIt() {
    AtomicLong now = new AtomicLong();
    RefusedListPause pause = new RefusedListPause(Duration.ofMinutes(5), now::get);
    assertTrue(pause.mayList(), "the first list goes out");
    pause.refused();
    now.addAndGet(Duration.ofMinutes(4).toNanos());
    assertFalse(pause.mayList(), "the informer's retries a second later send nothing");
    now.addAndGet(Duration.ofMinutes(1).toNanos());
    assertTrue(pause.mayList(), "after the pause, the list is tried again");
    pause.listed();
    assertTrue(pause.mayList());
  }

  @Test
  void aCachedKubeconfigSecretKeepsItsIdentityVersionAndKubeconfigOnly() {
    io.kubernetes.client.openapi.models.V1Secret secret =
        new io.kubernetes.client.openapi.models.V1Secret()
            .metadata(
                new V1ObjectMeta()
                    .name("tenant-kubeconfig")
                    .namespace("ns")
                    .uid("u1")
                    .resourceVersion("7")
                    .labels(Map.of("cluster.x-k8s.io/cluster-name", "tenant"))
                    .annotations(Map.of("a", "b"))
                    .managedFields(List.of(new V1ManagedFieldsEntry().manager("capi"))))
            .type("cluster.x-k8s.io/secret")
            .data(Map.of("value", new byte[] {1}, "other", new byte[] {2}));

    ManagementInformers.trimSecret(secret);

    assertEquals(
        new V1ObjectMeta().name("tenant-kubeconfig").namespace("ns").uid("u1").resourceVersion("7"),
        secret.getMetadata());
    assertEquals(List.of("value"), List.copyOf(secret.getData().keySet()));
    assertNull(secret.getType());
  }

  @Test
  void aCachedObjectKeepsOnlyTheMetadataItsReadersUse() {
    KubevirtMachine kvm = new KubevirtMachine();
    kvm.setMetadata(
        new V1ObjectMeta()
            .name("m")
            .namespace("ns")
            .uid("u")
            .resourceVersion("7")
            .labels(Map.of("cluster.x-k8s.io/cluster-name", "t"))
            .annotations(
                Map.of(
                    ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION,
                    "",
                    "kubectl.kubernetes.io/last-applied-configuration",
                    "{...}"))
            .managedFields(List.of(new V1ManagedFieldsEntry().manager("capi")))
            .ownerReferences(
                List.of(
                    new V1OwnerReference()
                        .kind("Machine")
                        .apiVersion("cluster.x-k8s.io/v1beta1")
                        .name("owner"))));
    V1ObjectMeta m = ManagementInformers.trim(kvm).getMetadata();
    assertEquals("m", m.getName());
    assertEquals("ns", m.getNamespace());
    assertEquals("7", m.getResourceVersion());
    assertEquals(Map.of(ClusterApi.EXCLUDE_NODE_DRAINING_ANNOTATION, ""), m.getAnnotations());
    assertEquals("owner", m.getOwnerReferences().get(0).getName());
    assertNull(m.getLabels());
    assertNull(m.getManagedFields());
  }
}
