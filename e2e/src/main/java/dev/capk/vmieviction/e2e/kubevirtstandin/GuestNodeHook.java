package dev.capk.vmieviction.e2e.kubevirtstandin;

/**
 * What the VM's guest OS would notice: the VM stopped (its guest node goes NotReady) and the VM
 * runs again on an infra node (the guest node comes back). The stand-in calls this; tests decide
 * what a "reboot" does to the guest cluster.
 */
public interface GuestNodeHook {
  void vmStopped(String namespace, String vmiName);

  void vmRunning(String namespace, String vmiName, String infraNode);

  GuestNodeHook NONE =
      new GuestNodeHook() {
        @Override
        public void vmStopped(String namespace, String vmiName) {}

        @Override
        public void vmRunning(String namespace, String vmiName, String infraNode) {}
      };
}
