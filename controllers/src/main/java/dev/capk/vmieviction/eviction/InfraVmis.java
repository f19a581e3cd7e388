package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.openapi.ApiException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The reconciler's view of VMIs in the infra cluster: reads from the cache, writes narrowly. */
public interface InfraVmis {

  Optional<VirtualMachineInstance> get(String namespace, String name);

  /**
   * The cached VMIs of tenant Cluster {@code cluster} in {@code namespace} (label {@code
   * cluster.x-k8s.io/cluster-name}): an index lookup in the informer cache, never a request.
   */
  List<VirtualMachineInstance> ofCluster(String namespace, String cluster);

  /**
   * Sets (or, with a null value, removes) annotations in one JSON merge patch guarded by the
   * object's resourceVersion, so a stale cache can never overwrite a newer value.
   *
   * @return the VMI as the server has it after the patch
   * @throws ApiException 409 when the object changed since it was read, 404 when it is gone
   */
  VirtualMachineInstance annotate(VirtualMachineInstance vmi, Map<String, String> changes)
      throws ApiException;

  /** As {@link #annotate(VirtualMachineInstance, Map)}, for one annotation. */
  default VirtualMachineInstance annotate(VirtualMachineInstance vmi, String key, String value)
      throws ApiException {
    return annotate(vmi, Collections.singletonMap(key, value));
  }

  enum DeleteOutcome {
    DELETED,
    GONE,
    /** The UID precondition failed: a new VMI of that name exists; it is not ours to delete. */
    REPLACED
  }

  /** Deletes exactly this VMI: UID precondition, Foreground propagation. */
  DeleteOutcome deleteExact(VirtualMachineInstance vmi) throws ApiException;
}
