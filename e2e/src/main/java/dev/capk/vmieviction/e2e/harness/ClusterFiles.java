package dev.capk.vmieviction.e2e.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The on-disk layout of one local cluster: PKI, etcd data, kubeconfig, one log per component. */
record ClusterFiles(Path dir) {
  Path etcdData() {
    return dir.resolve("etcd-data");
  }

  Path caCert() {
    return dir.resolve("pki/ca.crt");
  }

  Path servingCert() {
    return dir.resolve("pki/apiserver.crt");
  }

  Path servingKey() {
    return dir.resolve("pki/apiserver.key");
  }

  Path serviceAccountPublicKey() {
    return dir.resolve("pki/sa.pub");
  }

  Path serviceAccountPrivateKey() {
    return dir.resolve("pki/sa.key");
  }

  Path adminKubeconfig() {
    return dir.resolve("admin.kubeconfig");
  }

  Path log(String component) {
    return dir.resolve("logs/" + component + ".log");
  }

  /** Creates a fresh, empty layout (a previous run's data under the same name is removed). */
  static ClusterFiles fresh(Path dir) {
    try {
      Directories.deleteRecursively(dir);
      Files.createDirectories(dir.resolve("pki"));
      Files.createDirectories(dir.resolve("logs"));
      return new ClusterFiles(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare " + dir, e);
    }
  }

  /** Empties etcd's data directory, for a fresh start after a failed one. */
  void resetEtcdData() {
    try {
      Directories.deleteRecursively(etcdData());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + etcdData(), e);
    }
  }
}
