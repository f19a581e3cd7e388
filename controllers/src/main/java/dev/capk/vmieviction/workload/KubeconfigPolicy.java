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
 * commands in our process) and auth providers are refused. Pure; messages never quote values.
 */
public final class KubeconfigPolicy {
  private KubeconfigPolicy() {}

  private static final Set<String> FORBIDDEN_CLUSTER_KEYS = Set.of("certificate-authority");
  private static final Set<String> FORBIDDEN_USER_KEYS =
      Set.of("client-certificate", "client-key", "tokenFile", "exec", "auth-provider");

  /** The problems found; empty means acceptable. Never contains the kubeconfig's values. */
  public static List<String> violations(String kubeconfigYaml) {
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
    if (!(map.get("clusters") instanceof List<?> clusters) || clusters.isEmpty()) {
      problems.add("no clusters");
    } else {
      for (Object entry : clusters) {
        if (entry instanceof Map<?, ?> named && named.get("cluster") instanceof Map<?, ?> c) {
          Object server = c.get("server");
          // Without a scheme client-java falls back to plain http and would send credentials in clear.
          if (!(server instanceof String s) || !s.startsWith("https://")) {
            problems.add("cluster server is not an https:// URL");
          }
        }
      }
    }
    return problems;
  }

  private static void check(Object entries, String kind, Set<String> forbidden, List<String> out) {
    if (!(entries instanceof List<?> list)) {
      return;
    }
    for (Object entry : list) {
      if (!(entry instanceof Map<?, ?> named)) {
        continue;
      }
      Object body = named.get(kind);
      if (!(body instanceof Map<?, ?> fields)) {
        continue;
      }
      for (Object key : fields.keySet()) {
        if (forbidden.contains(String.valueOf(key))) {
          out.add(kind + " uses '" + key + "', which is not allowed in a guest kubeconfig");
        }
      }
    }
  }
}
