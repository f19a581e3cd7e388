package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The VMIs as our own writes left them, until the informer's cache has caught up: so that a step
 * reads what the step before it wrote. Under load the infra API server's watch can run seconds
 * behind; a step that read its VMI from the cache would then miss the drain start it wrote a moment
 * ago, take the annotation for removed, and have its corrective write refused (409) again and again
 * until the cache caught up, while a finished drain waited.
 *
 * <p>Sound without comparing resourceVersions for order (they are opaque): a cached VMI whose
 * resourceVersion is one that a write of ours was accepted over is certainly older than that
 * write's result, so the result is served instead; any other version is the cache's, and this
 * forgets the VMI.
 */
final class OwnWrites {

  /** Our latest write's result, and the versions our writes were accepted over. */
  private record Written(String uid, VirtualMachineInstance result, Set<String> superseded) {}

  private final Map<String, Written> byKey = new ConcurrentHashMap<>();

  /**
   * A write of ours over {@code before} was accepted and gave {@code after}.
   *
   * @param before the VMI the write was guarded by (its resourceVersion the precondition)
   */
  void wrote(VirtualMachineInstance before, VirtualMachineInstance after) {
    String key = key(before);
    String uid = before.getMetadata().getUid();
    String over = before.getMetadata().getResourceVersion();
    if (after == null || after.getMetadata() == null || over == null) {
      return;
    }
    byKey.compute(
        key,
        (k, known) -> {
          Set<String> superseded = new HashSet<>();
          if (known != null && known.uid().equals(uid)) {
            superseded.addAll(known.superseded());
          }
          superseded.add(over);
          return new Written(uid, after, Set.copyOf(superseded));
        });
  }

  /** The fresher of the cached VMI and our latest write of it. */
  VirtualMachineInstance freshest(VirtualMachineInstance cached) {
    if (cached == null || cached.getMetadata() == null) {
      return cached;
    }
    String key = key(cached);
    Written w = byKey.get(key);
    if (w == null) {
      return cached;
    }
    if (w.uid().equals(cached.getMetadata().getUid())
        && w.superseded().contains(cached.getMetadata().getResourceVersion())) {
      return w.result();
    }
    // The cache has our write or something newer (or another VMI of that name): it is current.
    byKey.remove(key, w);
    return cached;
  }

  /** The VMI is gone from the cache. */
  void forget(String namespace, String name) {
    byKey.remove(namespace + "/" + name);
  }

  int size() {
    return byKey.size();
  }

  private static String key(VirtualMachineInstance vmi) {
    return vmi.getMetadata().getNamespace() + "/" + vmi.getMetadata().getName();
  }
}
