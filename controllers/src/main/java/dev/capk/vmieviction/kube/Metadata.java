package dev.capk.vmieviction.kube;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.util.Map;

/** An object's labels and annotations, null when the metadata, the map or the key is absent. */
public final class Metadata {

  private Metadata() {}

  public static String label(KubernetesObject o, String key) {
    V1ObjectMeta meta = o.getMetadata();
    Map<String, String> labels = meta == null ? null : meta.getLabels();
    return labels == null ? null : labels.get(key);
  }

  public static String annotation(KubernetesObject o, String key) {
    return annotation(o.getMetadata(), key);
  }

  public static String annotation(V1ObjectMeta meta, String key) {
    Map<String, String> annotations = meta == null ? null : meta.getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }
}
