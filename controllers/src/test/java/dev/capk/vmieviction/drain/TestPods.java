package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1EmptyDirVolumeSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/** Builds pods for unit tests. */
final class TestPods {
  private final V1Pod pod;

  private TestPods(String namespace, String name) {
    pod =
        new V1Pod()
            .metadata(
                new V1ObjectMeta()
                    .namespace(namespace)
                    .name(name)
                    .uid(UUID.randomUUID().toString()))
            .spec(new V1PodSpec().nodeName("node-1"))
            .status(new V1PodStatus().phase("Running"));
  }

  static TestPods pod(String namespace, String name) {
    return new TestPods(namespace, name);
  }

  TestPods ownedBy(String kind, String name) {
    pod.getMetadata()
        .addOwnerReferencesItem(
            new V1OwnerReference()
                .apiVersion(
                    kind.equals("DaemonSet")
                            || kind.equals("ReplicaSet")
                            || kind.equals("StatefulSet")
                        ? "apps/v1"
                        : "v1")
                .kind(kind)
                .name(name)
                .uid(UUID.randomUUID().toString())
                .controller(true));
    return this;
  }

  TestPods ownedNotAsController(String kind, String name) {
    pod.getMetadata()
        .addOwnerReferencesItem(
            new V1OwnerReference()
                .apiVersion("v1")
                .kind(kind)
                .name(name)
                .uid(UUID.randomUUID().toString())
                .controller(false));
    return this;
  }

  TestPods mirror() {
    pod.getMetadata().putAnnotationsItem(PodFilters.MIRROR_POD_ANNOTATION, "abc");
    return this;
  }

  TestPods emptyDir() {
    pod.getSpec()
        .addVolumesItem(new V1Volume().name("scratch").emptyDir(new V1EmptyDirVolumeSource()));
    return this;
  }

  TestPods phase(String phase) {
    pod.getStatus().setPhase(phase);
    return this;
  }

  TestPods deletedAt(OffsetDateTime when) {
    pod.getMetadata().setDeletionTimestamp(when);
    return this;
  }

  TestPods labels(String... kv) {
    Map<String, String> l = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      l.put(kv[i], kv[i + 1]);
    }
    pod.getMetadata().setLabels(l);
    return this;
  }

  V1Pod build() {
    return pod;
  }
}
