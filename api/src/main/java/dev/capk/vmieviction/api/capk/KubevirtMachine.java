package dev.capk.vmieviction.api.capk;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ObjectMeta;

/**
 * A partial CAPK {@code KubevirtMachine}: only its metadata, for its owner (the Cluster API
 * Machine) and the {@code capk.cluster.x-k8s.io/vmi-deletion-grace-time} annotation CAPK's machine
 * controller (v0.1.8 and later) writes on it. Read-only for us.
 */
public class KubevirtMachine implements KubernetesObject {

  private String apiVersion;
  private String kind = CapkApi.KUBEVIRT_MACHINE_KIND;
  private V1ObjectMeta metadata;

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  @Override
  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  @Override
  public V1ObjectMeta getMetadata() {
    return metadata;
  }

  public void setMetadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
  }

  public KubevirtMachine metadata(V1ObjectMeta metadata) {
    this.metadata = metadata;
    return this;
  }
}
