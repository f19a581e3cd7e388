package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.util.labels.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Label selectors: the string form kubectl's {@code --pod-selector} takes (parsed here so a bad one
 * is refused before the drain changes anything; the API server matches it), and the structured form
 * PodDisruptionBudgets use (matched by the official client). client-java has no parser for the
 * string form, and knows neither {@code <} nor {@code >}, which kubectl accepts.
 */
public final class LabelSelectors {
  private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final String TOKEN = "([^\\s!=(),<>]+)";
  private static final Pattern EXISTS = Pattern.compile("\\s*(!?)\\s*" + TOKEN + "\\s*");
  private static final Pattern COMPARE =
      Pattern.compile("\\s*" + TOKEN + "\\s*(==|=|!=|<|>)\\s*([^\\s!=(),<>]*)\\s*");
  private static final Pattern SET =
      Pattern.compile("\\s*" + TOKEN + "\\s+(in|notin)\\s*\\(([^()]*)\\)\\s*");

  private LabelSelectors() {}

  /**
   * Checks a selector in kubectl's syntax ({@code a=b,c!=d,e in (f,g),!h,i,n>4}); empty or blank
   * selects everything. The API server matches it: it is only checked here.
   *
   * @throws IllegalArgumentException naming the selector and what is wrong with it
   */
  public static void check(String selector) {
    if (selector == null || selector.isBlank()) {
      return;
    }
    try {
      split(selector).forEach(LabelSelectors::requirement);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "invalid label selector \"" + selector + "\": " + e.getMessage(), e);
    }
  }

  /** The requirements' texts: split at the commas outside parentheses. */
  private static List<String> split(String selector) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < selector.length(); i++) {
      char c = selector.charAt(i);
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth < 0 || depth > 1) {
        throw new IllegalArgumentException("unbalanced parentheses");
      }
      if (c == ',' && depth == 0) {
        parts.add(selector.substring(start, i));
        start = i + 1;
      }
    }
    if (depth != 0) {
      throw new IllegalArgumentException("unbalanced parentheses");
    }
    parts.add(selector.substring(start));
    return parts;
  }

  private static void requirement(String text) {
    Matcher m;
    if ((m = EXISTS.matcher(text)).matches()) {
      key(m.group(2));
    } else if ((m = COMPARE.matcher(text)).matches()) {
      String op = m.group(2);
      String v = m.group(3);
      if (op.equals("<") || op.equals(">")) {
        if (!v.matches("-?[0-9]+")) {
          throw new IllegalArgumentException("'" + op + "' needs an integer, found \"" + v + "\"");
        }
      } else {
        value(v);
      }
      key(m.group(1));
    } else if ((m = SET.matcher(text)).matches()) {
      for (String v : m.group(3).split(",", -1)) {
        if (v.isBlank()) {
          throw new IllegalArgumentException("'" + m.group(2) + "' needs values: (a, b)");
        }
        value(v.strip());
      }
      key(m.group(1));
    } else {
      throw new IllegalArgumentException(
          "cannot parse requirement \""
              + text.strip()
              + "\" (expected key, !key, key=value, key!=value, key in (v,...), key notin (v,...),"
              + " key<n or key>n)");
    }
  }

  /**
   * Whether a structured selector (a PodDisruptionBudget's) selects a pod with these labels: the
   * official client's matcher, and as for policy/v1 budgets, a null selector selects nothing, an
   * empty one every pod.
   */
  public static boolean matches(V1LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return false;
    }
    try {
      return LabelSelector.parse(selector).test(labels == null ? Map.of() : labels);
    } catch (IllegalArgumentException unknownOperator) {
      // An operator the client does not know cannot be proven to match.
      return false;
    }
  }

  private static void key(String key) {
    String name = key;
    int slash = key.indexOf('/');
    if (slash >= 0) {
      String prefix = key.substring(0, slash);
      name = key.substring(slash + 1);
      if (prefix.isEmpty() || prefix.length() > 253 || !DNS_SUBDOMAIN.matcher(prefix).matches()) {
        throw new IllegalArgumentException(
            "label key \"" + key + "\": prefix must be a DNS subdomain");
      }
    }
    if (name.isEmpty() || name.length() > 63 || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "label key \"" + key + "\": name must be at most 63 characters, " + NAME_RULE);
    }
  }

  private static void value(String value) {
    if (!value.isEmpty() && (value.length() > 63 || !NAME.matcher(value).matches())) {
      throw new IllegalArgumentException(
          "label value \"" + value + "\": must be at most 63 characters, " + NAME_RULE);
    }
  }

  private static final String NAME_RULE =
      "alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character";
}
