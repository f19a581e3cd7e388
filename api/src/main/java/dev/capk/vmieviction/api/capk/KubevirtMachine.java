package dev.capk.vmieviction.api.capk;

import dev.capk.vmieviction.api.ApiObject;

/**
 * A partial CAPK {@code KubevirtMachine}: only its metadata, for its owner (the Cluster API
 * Machine) and the {@code capk.cluster.x-k8s.io/vmi-deletion-grace-time} annotation CAPK's machine
 * controller (v0.1.8 and later) writes on it. Read-only for us.
 */
public class KubevirtMachine extends ApiObject<KubevirtMachine> {

  public KubevirtMachine() {
    super(null, CapkApi.KUBEVIRT_MACHINE_KIND);
  }
}
