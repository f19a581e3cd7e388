package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.Comparator;
import java.util.Objects;

/** One pod, by identity: a StatefulSet's pod recreated under the same name has another UID. */
public record PodRef(String namespace, String name, String uid) implements Comparable<PodRef> {
  private static final Comparator<PodRef> ORDER =
      Comparator.comparing(PodRef::namespace)
          .thenComparing(PodRef::name)
          .thenComparing(PodRef::uid, Comparator.nullsFirst(Comparator.naturalOrder()));

  public PodRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  public static PodRef of(V1Pod pod) {
    V1ObjectMeta m = Objects.requireNonNull(pod.getMetadata(), "pod metadata");
    return new PodRef(m.getNamespace() == null ? "" : m.getNamespace(), m.getName(), m.getUid());
  }

  /** {@code namespace/name}, the way kubectl names pods in its messages. */
  @Override
  public String toString() {
    return namespace + "/" + name;
  }

  @Override
  public int compareTo(PodRef o) {
    return ORDER.compare(this, o);
  }
}
