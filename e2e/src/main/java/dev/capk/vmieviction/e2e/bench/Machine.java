package dev.capk.vmieviction.e2e.bench;

import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What the report header says about the machine: cores, memory, JDK, pinned Kubernetes versions,
 * load.
 */
final class Machine {
  private Machine() {}

  static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
          .filter(l -> l.startsWith("model name"))
          .findFirst()
          .map(l -> l.substring(l.indexOf(':') + 1).strip())
          .orElse("unknown CPU");
    } catch (IOException e) {
      return "unknown CPU";
    }
  }

  static String memory() {
    return meminfoKb("MemTotal")
        .map(kb -> Report.f("%.1f GiB", kb / 1024.0 / 1024.0))
        .orElse("unknown");
  }

  static Optional<Long> meminfoKb(String key) {
    try {
      return Files.readAllLines(Path.of("/proc/meminfo")).stream()
          .filter(l -> l.startsWith(key + ":"))
          .findFirst()
          .map(l -> Long.parseLong(l.replaceAll("[^0-9]", "")));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  static String loadAverage() {
    try {
      String[] p = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return p[0] + " " + p[1] + " " + p[2];
    } catch (IOException e) {
      return "unknown";
    }
  }

  static String jdk() {
    return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
  }

  static Map<String, String> versions() {
    Map<String, String> v = new LinkedHashMap<>();
    try {
      for (String line : Files.readAllLines(RepoPaths.root().resolve("hack/versions.env"))) {
        if (!line.isBlank() && !line.startsWith("#") && line.contains("=")) {
          v.put(
              line.substring(0, line.indexOf('=')).strip(),
              line.substring(line.indexOf('=') + 1).strip());
        }
      }
    } catch (IOException e) {
      v.put("KUBERNETES_VERSION", "unknown");
    }
    return v;
  }

  /** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ). */
  private static final double TICKS_PER_SECOND = 100.0;

  /**
   * CPU seconds the whole machine has spent busy (all cores, not idle nor waiting on I/O), from
   * /proc/stat.
   */
  static double busyCpuSeconds() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < Math.min(f.length, 9); i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
      return (total - idle) / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
