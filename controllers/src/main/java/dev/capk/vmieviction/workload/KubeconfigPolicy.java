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

  /**
   * The problems found; empty means acceptable. Never contains the kubeconfig's values.
   *
   * @param allowInsecureTls the operator's explicit choice to accept the TLS-relaxing fields
   */
  public static List<String> violations(String kubeconfigYaml, boolean allowInsecureTls) {
    Object root;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setMaxAliasesForCollections(10);
      options.setAllowDuplicateKeys(false);
      options.setCodePointLimit(1024 * 1024);
      root = new Yaml(new SafeConstructor(options)).load(kubeconfigYaml);
    } catch (RuntimeException e) {
      // The parser's message can quote the input: say only that it is not YAML.
      return List.of("not valid YAML");
    }
    if (!(root instanceof Map<?, ?> map)) {
      return List.of("not a kubeconfig (top level is not a mapping)");
    }
    List<String> problems = new ArrayList<>();
    List<Map<?, ?>> clusters = bodies(map.get("clusters"), "cluster");
    forbidden(clusters, "cluster", FORBIDDEN_CLUSTER_KEYS, problems);
    forbidden(bodies(map.get("users"), "user"), "user", FORBIDDEN_USER_KEYS, problems);
    for (Map<?, ?> cluster : allowInsecureTls ? List.<Map<?, ?>>of() : clusters) {
      for (String key : TLS_RELAXING_CLUSTER_KEYS) {
        Object value = cluster.get(key);
        // insecure-skip-tls-verify: false, or an empty value, changes nothing.
        if (value != null
            && (key.equals("insecure-skip-tls-verify")
                ? !Boolean.FALSE.equals(value)
                : !String.valueOf(value).isBlank())) {
          problems.add(
              "cluster uses '"
                  + key
                  + "', which relaxes TLS and is not allowed in a guest kubeconfig"
                  + " (unless the controller runs with --allow-insecure-guest-tls)");
        }
      }
    }
    if (clusters.isEmpty()) {
      problems.add("no clusters");
    }
    for (Map<?, ?> cluster : clusters) {
      // Without a scheme client-java falls back to plain http and would send credentials in clear.
      if (!(cluster.get("server") instanceof String s) || !s.startsWith("https://")) {
        problems.add("cluster server is not an https:// URL");
      }
    }
    return problems;
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

  private static void forbidden(
      List<Map<?, ?>> bodies, String kind, Set<String> forbidden, List<String> out) {
    for (Map<?, ?> fields : bodies) {
      for (Object key : fields.keySet()) {
        if (forbidden.contains(String.valueOf(key))) {
          out.add(kind + " uses '" + key + "', which is not allowed in a guest kubeconfig");
        }
      }
    }
  }
}
