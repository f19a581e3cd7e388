package dev.capk.vmieviction.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * What a guest kubeconfig may contain. It comes from a Secret in a tenant's namespace, so it is
 * untrusted input: only embedded credentials are accepted. File references (which could make us
 * send our own service account token or keys to a tenant's server), exec plugins (which would run
 * commands in our process) and auth providers are refused. TLS is never relaxed: a cluster that
 * skips certificate verification, names another TLS server or goes through a proxy is refused too,
 * unless the operator explicitly allows it ({@code --allow-insecure-guest-tls}). Pure; messages
 * name the field and never quote values.
 */
public final class KubeconfigPolicy {
  private KubeconfigPolicy() {}

  private static final Set<String> FORBIDDEN_CLUSTER_KEYS = Set.of("certificate-authority");
  private static final Set<String> FORBIDDEN_USER_KEYS =
      Set.of("client-certificate", "client-key", "tokenFile", "exec", "auth-provider");

  /**
   * Cluster fields that weaken or redirect TLS: skipping verification (a man in the middle then
   * gets the tenant's credentials), a server name other than the server's (the certificate of a
   * different host would be accepted), and a proxy (someone else's host sees the connection).
   */
  static final List<String> TLS_RELAXING_CLUSTER_KEYS =
      List.of("insecure-skip-tls-verify", "tls-server-name", "proxy-url");

  /** The problems found with TLS kept strict; empty means acceptable. Never contains values. */
  public static List<String> violations(String kubeconfigYaml) {
    return violations(kubeconfigYaml, false);
  }

  /**
   * The problems found; empty means acceptable. Never contains the kubeconfig's values.
   *
   * @param allowInsecureTls the operator's explicit choice to accept the TLS-relaxing fields
   */
  public static List<String> violations(String kubeconfigYaml, boolean allowInsecureTls) {
    List<String> problems = new ArrayList<>();
    Object root;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setMaxAliasesForCollections(10);
      options.setAllowDuplicateKeys(false);
      options.setCodePointLimit(1024 * 1024);
      root = new Yaml(new SafeConstructor(options)).load(kubeconfigYaml);
    } catch (RuntimeException e) {
      // The parser's message can quote the input: say only that it is not YAML.
      problems.add("not valid YAML");
      return problems;
    }
    if (!(root instanceof Map<?, ?> map)) {
      problems.add("not a kubeconfig (top level is not a mapping)");
      return problems;
    }
    check(map.get("clusters"), "cluster", FORBIDDEN_CLUSTER_KEYS, problems);
    check(map.get("users"), "user", FORBIDDEN_USER_KEYS, problems);
    if (!allowInsecureTls) {
      checkTls(map.get("clusters"), problems);
    }
    if (!(map.get("clusters") instanceof List<?> clusters) || clusters.isEmpty()) {
      problems.add("no clusters");
    } else {
      for (Object entry : clusters) {
        if (entry instanceof Map<?, ?> named && named.get("cluster") instanceof Map<?, ?> c) {
          Object server = c.get("server");
          // Without a scheme client-java falls back to plain http and would send credentials in
          // clear.
          if (!(server instanceof String s) || !s.startsWith("https://")) {
            problems.add("cluster server is not an https:// URL");
          }
        }
      }
    }
    return problems;
  }

  private static void checkTls(Object clusters, List<String> out) {
    for (Map<?, ?> cluster : bodies(clusters, "cluster")) {
      for (String key : TLS_RELAXING_CLUSTER_KEYS) {
        if (relaxes(key, cluster.get(key))) {
          out.add(
              "cluster uses '"
                  + key
                  + "', which relaxes TLS and is not allowed in a guest kubeconfig"
                  + " (unless the controller runs with --allow-insecure-guest-tls)");
        }
      }
    }
  }

  /**
   * Whether a TLS field's value changes anything: {@code insecure-skip-tls-verify: false} or an
   * empty value does not.
   */
  private static boolean relaxes(String key, Object value) {
    if (value == null) {
      return false;
    }
    if (key.equals("insecure-skip-tls-verify")) {
      return !Boolean.FALSE.equals(value);
    }
    return !String.valueOf(value).isBlank();
  }

  /**
   * The {@code kind} mappings of a named list ({@code clusters[].cluster}, {@code users[].user}).
   */
  private static List<Map<?, ?>> bodies(Object entries, String kind) {
    List<Map<?, ?>> out = new ArrayList<>();
    if (entries instanceof List<?> list) {
      for (Object entry : list) {
        if (entry instanceof Map<?, ?> named && named.get(kind) instanceof Map<?, ?> body) {
          out.add(body);
        }
      }
    }
    return out;
  }

  private static void check(Object entries, String kind, Set<String> forbidden, List<String> out) {
    for (Map<?, ?> fields : bodies(entries, kind)) {
      for (Object key : fields.keySet()) {
        if (forbidden.contains(String.valueOf(key))) {
          out.add(kind + " uses '" + key + "', which is not allowed in a guest kubeconfig");
        }
      }
    }
  }
}
