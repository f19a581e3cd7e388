package dev.capk.vmieviction.e2e.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * VirtualMachineInstances shaped like the ones CAPK creates through KubeVirt: the labels,
 * annotations, owner reference and finalizers KubeVirt sets, a full domain spec (CPU, memory,
 * disks, interfaces, features, firmware), a cloud-init volume carrying a kubeadm join script (as
 * CAPK's bootstrap data carries it, not base64 in NoCloud userData), and the status virt-controller
 * and virt-handler write (conditions, interfaces, guest OS, volume status, topology). About 6 KB of
 * JSON as the API server returns it, managedFields included.
 */
final class RealisticVmis {
  private RealisticVmis() {}

  /**
   * The object to POST (status is a subresource: it is written separately, see {@link #status}).
   */
  static String vmi(String namespace, String name, String cluster) {
    String uid = UUID.nameUUIDFromBytes((namespace + "/" + name).getBytes()).toString();
    String serial = uid.substring(0, 8);
    return
"""
                {"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
                 "metadata":{"name":"%1$s","namespace":"%2$s",
                  "labels":{"kubevirt.io/vm":"%1$s",
                   "cluster.x-k8s.io/cluster-name":"%3$s","cluster.x-k8s.io/role":"worker",
                   "capk.cluster.x-k8s.io/kubevirt-machine-name":"%1$s","capk.cluster.x-k8s.io/kubevirt-machine-namespace":"%2$s"},
                  "annotations":{"kubevirt.io/latest-observed-api-version":"v1","kubevirt.io/storage-observed-api-version":"v1",
                   "kubevirt.io/vm-generation":"1","capk.cluster.x-k8s.io/kubevirt-machine-uid":"%4$s",
                    "kubevirt.io/cluster-preference-name":""},
                  "finalizers":["kubevirt.io/virtualMachineControllerFinalize","foregroundDeleteVirtualMachine"],
                  "ownerReferences":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","name":"%1$s",
                   "uid":"%4$s","controller":true,"blockOwnerDeletion":true}]},
                 "spec":{"evictionStrategy":"External","terminationGracePeriodSeconds":600,
                  "nodeSelector":{"kubevirt.io/schedulable":"true","node-role.kubernetes.io/worker":""},
                  "domain":{"cpu":{"cores":4,"sockets":1,"threads":1,"model":"host-model","maxSockets":4},
                   "memory":{"guest":"16Gi","maxGuest":"16Gi"},
                   "resources":{"requests":{"cpu":"4","memory":"16Gi"},"limits":{"cpu":"4","memory":"16Gi"}},
                   "machine":{"type":"q35"},
                   "firmware":{"uuid":"%4$s","serial":"%5$s","bootloader":{"efi":{"secureBoot":false}}},
                   "features":{"acpi":{"enabled":true},"apic":{"enabled":true}},
                   "devices":{"disks":[{"name":"containervolume","disk":{"bus":"virtio"},"bootOrder":1},
                     {"name":"cloudinitvolume","disk":{"bus":"virtio"}}],
                    "interfaces":[{"name":"default","masquerade":{},"model":"virtio"}],
                    "rng":{},"networkInterfaceMultiqueue":true,"autoattachGraphicsDevice":false}},
                  "networks":[{"name":"default","pod":{}}],
                  "volumes":[{"name":"containervolume","containerDisk":{"image":"quay.io/capk/ubuntu-2204-container-disk:v1.30.1","imagePullPolicy":"IfNotPresent"}},
                   {"name":"cloudinitvolume","cloudInitNoCloud":{"userData":"#cloud-config\\nhostname: %1$s\\nfqdn: %1$s\\nwrite_files:\\n\
- path: /run/kubeadm/kubeadm-join-config.yaml\\n  owner: root:root\\n  permissions: '0640'\\n  content: |\\n\
    apiVersion: kubeadm.k8s.io/v1beta3\\n    kind: JoinConfiguration\\n    discovery:\\n      bootstrapToken:\\n\
        apiServerEndpoint: %3$s-lb.tenants.svc:6443\\n        caCertHashes:\\n\
        - sha256:4f6a2c8e1d0b9a7f3e5c2d1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f\\n\
        token: abcdef.0123456789abcdef\\n    nodeRegistration:\\n      kubeletExtraArgs:\\n\
        provider-id: kubevirt://%1$s\\n      name: '{{ ds.meta_data.local_hostname }}'\\n\
runcmd:\\n- kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml\\n"}}]}}
                """
        .formatted(name, namespace, cluster, uid, serial);
  }

  /**
   * The status subresource as virt-controller and virt-handler fill it for a running VMI on {@code
   * node}.
   */
  static String status(String name, String node, String podIp) {
    return """
                {"status":{"phase":"Running","nodeName":"%2$s","qosClass":"Guaranteed","launcherContainerImageVersion":"quay.io/kubevirt/virt-launcher:v1.4.0",
                 "virtualMachineRevisionName":"revision-start-vm-%1$s-1",
                 "activePods":{"5c0f3d2a-9e1b-4d57-8a44-%3$s":"%2$s"},
                 "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-10T09:14:02Z"},
                  {"type":"LiveMigratable","status":"True"},
                  {"type":"AgentConnected","status":"True","lastTransitionTime":"2026-01-10T09:14:31Z"}],
                 "interfaces":[{"name":"default","interfaceName":"enp1s0","ipAddress":"%4$s","ipAddresses":["%4$s","fd10:0:2::2"],
                  "mac":"52:54:00:6e:1f:2b","infoSource":"domain, guest-agent","queueCount":4,"linkState":"up"}],
                 "guestOSInfo":{"id":"ubuntu","name":"Ubuntu","prettyName":"Ubuntu 22.04.4 LTS","version":"22.04.4 LTS (Jammy Jellyfish)",
                  "versionId":"22.04","kernelRelease":"5.15.0-113-generic","machine":"x86_64"},
                 "currentCPUTopology":{"cores":4,"sockets":1,"threads":1},
                 "phaseTransitionTimestamps":[{"phase":"Pending","phaseTransitionTimestamp":"2026-01-10T09:13:40Z"},
                  {"phase":"Scheduled","phaseTransitionTimestamp":"2026-01-10T09:13:55Z"},
                  {"phase":"Running","phaseTransitionTimestamp":"2026-01-10T09:14:02Z"}],
                 "volumeStatus":[{"name":"cloudinitvolume","target":"vdb","size":1048576},
                  {"name":"containervolume","target":"vda"}]}}
                """
        .formatted(name, node, Integer.toHexString(name.hashCode() & 0xfffff), podIp);
  }

  /** Creates VMI {@code name}, Running on {@code node} with {@code podIp}. */
  static void create(
      RawKube api, String namespace, String name, String cluster, String node, String podIp)
      throws IOException {
    String base = "/apis/kubevirt.io/v1/namespaces/" + namespace + "/virtualmachineinstances";
    api.post(base, vmi(namespace, name, cluster));
    api.mergePatch(base + "/" + name + "/status", status(name, node, podIp));
  }

  /**
   * Sets {@code status.evacuationNodeName} on a VMI, as KubeVirt does when it refuses the
   * launcher's eviction.
   */
  static void mark(RawKube api, String namespace, String name, String infraNode)
      throws IOException {
    api.mergePatch(
        "/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstances/%s/status"
            .formatted(namespace, name),
        "{\"status\":{\"evacuationNodeName\":\"" + infraNode + "\"}}");
  }

  /**
   * VMIs {@code CLUSTER-md-NNNNN} of tenant {@code cluster} in {@code namespace} of {@code api}.
   */
  record Numbered(RawKube api, String namespace, String cluster) {
    String path() {
      return "/apis/kubevirt.io/v1/namespaces/" + namespace + "/virtualmachineinstances";
    }

    String name(int i) {
      return Report.f("%s-md-%05d", cluster, i);
    }

    /** Creates VMIs {@code from} to {@code to - 1}, Running on {@code node}, 16 at a time. */
    void create(String node, int from, int to) throws Exception {
      Bench.parallel(
          to - from,
          16,
          i -> {
            String ip = "10.244." + ((from + i) / 250 % 250) + "." + ((from + i) % 250 + 2);
            RealisticVmis.create(api, namespace, name(from + i), cluster, node, ip);
          });
    }
  }

  /**
   * {@link #mark Marks} VMI i of each of {@code targets} in turn, one at a time {@code pauseMs}
   * apart, and times until {@code seen} holds its name (a watch's receive time, nanoTime; at most
   * 30 s): the milliseconds per target, after {@code warmup} untimed rounds.
   */
  static List<Stats> reactionTimes(
      List<Numbered> targets,
      String infraNode,
      Map<String, Long> seen,
      int warmup,
      int samples,
      long pauseMs)
      throws Exception {
    List<List<Double>> out = new ArrayList<>();
    targets.forEach(t -> out.add(new ArrayList<>()));
    for (int i = 0; i < warmup + samples; i++) {
      for (int k = 0; k < targets.size(); k++) {
        Numbered t = targets.get(k);
        String name = t.name(i);
        long t0 = System.nanoTime();
        mark(t.api(), t.namespace(), name, infraNode);
        while (!seen.containsKey(name) && System.nanoTime() - t0 < 30_000_000_000L) {
          Thread.sleep(1);
        }
        if (!seen.containsKey(name)) {
          throw new IllegalStateException(name + ": nothing seen within 30 s of its marking");
        }
        if (i >= warmup) {
          out.get(k).add((seen.get(name) - t0) / 1e6);
        }
        Thread.sleep(pauseMs);
      }
    }
    return out.stream().map(Stats::of).toList();
  }
}
