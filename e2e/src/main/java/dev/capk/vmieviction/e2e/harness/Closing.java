package dev.capk.vmieviction.e2e.harness;

/** Closes what a test class started, in order, skipping what it never got to start. */
public final class Closing {
  private Closing() {}

  /**
   * Closes each non-null resource in order. Each is closed even when one before it fails (a test
   * must not leave processes behind); the first failure is thrown at the end.
   */
  public static void all(AutoCloseable... resources) {
    RuntimeException failure = null;
    for (AutoCloseable resource : resources) {
      if (resource == null) {
        continue;
      }
      try {
        resource.close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new IllegalStateException("closing " + resource + " failed", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
