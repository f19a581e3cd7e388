package dev.capk.vmieviction.drain;

/** Tells whether the DaemonSet a pod names as its controller still exists. */
@FunctionalInterface
public interface DaemonSetLookup {
  enum Presence {
    EXISTS,
    NOT_FOUND,
    UNKNOWN
  }

  /** The answer, and for NOT_FOUND or UNKNOWN (lookup failed) a message saying so. */
  record Answer(Presence presence, String message) {
    public static Answer exists() {
      return new Answer(Presence.EXISTS, "");
    }

    /** The message kubectl shows, from the API server's NotFound error. */
    public static Answer notFound(String name) {
      return new Answer(Presence.NOT_FOUND, "daemonsets.apps \"" + name + "\" not found");
    }

    public static Answer unknown(String message) {
      return new Answer(Presence.UNKNOWN, message);
    }
  }

  Answer find(String namespace, String name);
}
