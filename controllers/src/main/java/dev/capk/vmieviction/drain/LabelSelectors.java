package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.util.labels.LabelSelector;
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
  private static final String NAME = "[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?";

  /** A name, perhaps after a DNS subdomain prefix. */
  private static final String KEY =
      "(?:(?=[^/]{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
          + NAME;

  private static final Pattern REQUIREMENT =
      Pattern.compile(
          ("\\s*(?:!?\\s*K|K\\s*(?:==?|!=)\\s*(?:V)?|K\\s*[<>]\\s*-?[0-9]+"
                  + "|K\\s+(?:in|notin)\\s*\\(\\s*V\\s*(?:,\\s*V\\s*)*\\))\\s*(?:,(?=.)|$)")
              .replace("K", KEY)
              .replace("V", NAME));

  private LabelSelectors() {}

  /**
   * Checks a selector in kubectl's syntax ({@code a=b,c!=d,e in (f,g),!h,i,n>4}); blank: all.
   *
   * @throws IllegalArgumentException naming the selector and the first requirement that is wrong
   */
  public static void check(String selector) {
    if (selector == null || selector.isBlank()) {
      return;
    }
    Matcher m = REQUIREMENT.matcher(selector);
    for (int at = 0; at < selector.length(); at = m.end()) {
      if (!m.region(at, selector.length()).lookingAt()) {
        throw new IllegalArgumentException(
            "invalid label selector \""
                + selector
                + "\": cannot parse requirement \""
                + selector.substring(at).strip()
                + "\" (expected key, !key, key=value, key!=value, key in (v,...), key notin"
                + " (v,...), key<n or key>n; names and values at most 63 characters, alphanumeric,"
                + " '-', '_' or '.', starting and ending with an alphanumeric character)");
      }
    }
  }

  /** As for policy/v1 budgets, a null selector selects nothing, an empty one every pod. */
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
}
