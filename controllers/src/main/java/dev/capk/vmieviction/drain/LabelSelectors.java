package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.util.labels.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Label selectors: the string form kubectl's {@code --pod-selector} takes (parsed here so a bad one
 * is refused before the drain changes anything), and the structured form PodDisruptionBudgets use.
 *
 * <p>The structured form is matched by the official client. The string form is only validated (the
 * API server matches it): client-java has no parser for it, and knows neither {@code <} nor {@code
 * >}, which kubectl accepts.
 */
public final class LabelSelectors {
  private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern INTEGER = Pattern.compile("-?[0-9]+");

  private LabelSelectors() {}

  /**
   * One requirement of a selector. Matching pods is the API server's: the selector goes into the
   * list of the node's pods as given; it is parsed here to refuse a bad one first.
   */
  public record Requirement(String key, Operator operator, Set<String> values) {
    public Requirement {
      values = Set.copyOf(values);
    }
  }

  public enum Operator {
    EXISTS,
    DOES_NOT_EXIST,
    EQUALS,
    NOT_EQUALS,
    IN,
    NOT_IN,
    GREATER_THAN,
    LESS_THAN
  }

  /**
   * Parses a selector in kubectl's syntax ({@code a=b,c!=d,e in (f,g),!h,i}); empty or blank
   * selects everything.
   *
   * @throws IllegalArgumentException naming the selector and what is wrong with it
   */
  public static List<Requirement> parse(String selector) {
    if (selector == null || selector.isBlank()) {
      return List.of();
    }
    try {
      return new Parser(selector).parse();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "invalid label selector \"" + selector + "\": " + e.getMessage(), e);
    }
  }

  /**
   * Whether a structured selector (a PodDisruptionBudget's) selects a pod with these labels: the
   * official client's matcher (matchLabels; In, NotIn, Exists, DoesNotExist as Kubernetes reads
   * them), and as for policy/v1 budgets, a null selector selects nothing, an empty one every pod.
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

  static void validateKey(String key) {
    if (key.isEmpty()) {
      throw new IllegalArgumentException("empty label key");
    }
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
          "label key \""
              + key
              + "\": name must be at most 63 characters,"
              + " alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character");
    }
  }

  static void validateValue(String value) {
    if (!value.isEmpty() && (value.length() > 63 || !NAME.matcher(value).matches())) {
      throw new IllegalArgumentException(
          "label value \""
              + value
              + "\": must be at most 63 characters,"
              + " alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character");
    }
  }

  /** A recursive-descent parser over kubectl's selector tokens. */
  private static final class Parser {
    private final List<String> tokens;
    private int pos;

    Parser(String s) {
      this.tokens = tokenize(s);
    }

    List<Requirement> parse() {
      List<Requirement> out = new ArrayList<>();
      while (true) {
        out.add(requirement());
        if (pos == tokens.size()) {
          return out;
        }
        expect(",");
        if (pos == tokens.size()) {
          throw new IllegalArgumentException("a requirement must follow ','");
        }
      }
    }

    private Requirement requirement() {
      String t = next("a label key");
      if (t.equals("!")) {
        String key = identifier("a label key after '!'");
        validateKey(key);
        return new Requirement(key, Operator.DOES_NOT_EXIST, Set.of());
      }
      if (isSpecial(t)) {
        throw new IllegalArgumentException("expected a label key, found '" + t + "'");
      }
      validateKey(t);
      if (pos == tokens.size() || tokens.get(pos).equals(",")) {
        return new Requirement(t, Operator.EXISTS, Set.of());
      }
      String op = next("an operator");
      switch (op) {
        case "=", "==" -> {
          return new Requirement(t, Operator.EQUALS, Set.of(optionalValue()));
        }
        case "!=" -> {
          return new Requirement(t, Operator.NOT_EQUALS, Set.of(optionalValue()));
        }
        case ">", "<" -> {
          String v = identifier("an integer after '" + op + "'");
          if (!INTEGER.matcher(v).matches()) {
            throw new IllegalArgumentException(
                "'" + op + "' needs an integer, found \"" + v + "\"");
          }
          return new Requirement(
              t, op.equals(">") ? Operator.GREATER_THAN : Operator.LESS_THAN, Set.of(v));
        }
        case "in", "notin" -> {
          return new Requirement(t, op.equals("in") ? Operator.IN : Operator.NOT_IN, valueSet(op));
        }
        default ->
            throw new IllegalArgumentException(
                "expected an operator (=, ==, !=, in, notin, <, >) after \""
                    + t
                    + "\", found '"
                    + op
                    + "'");
      }
    }

    private String optionalValue() {
      if (pos == tokens.size() || tokens.get(pos).equals(",")) {
        return "";
      }
      String v = identifier("a label value");
      validateValue(v);
      return v;
    }

    private Set<String> valueSet(String op) {
      expect("(");
      Set<String> values = new TreeSet<>();
      while (true) {
        String t = next("a value or ')'");
        if (t.equals(")")) {
          if (values.isEmpty()) {
            throw new IllegalArgumentException("'" + op + "' needs at least one value");
          }
          return values;
        }
        if (isSpecial(t)) {
          throw new IllegalArgumentException(
              "expected a label value in '" + op + " (...)', found '" + t + "'");
        }
        validateValue(t);
        values.add(t);
        String sep = next("',' or ')'");
        if (sep.equals(")")) {
          return values;
        }
        if (!sep.equals(",")) {
          throw new IllegalArgumentException(
              "expected ',' or ')' in '" + op + " (...)', found '" + sep + "'");
        }
      }
    }

    private String identifier(String what) {
      String t = next(what);
      if (isSpecial(t)) {
        throw new IllegalArgumentException("expected " + what + ", found '" + t + "'");
      }
      return t;
    }

    private void expect(String token) {
      String t = next("'" + token + "'");
      if (!t.equals(token)) {
        throw new IllegalArgumentException("expected '" + token + "', found '" + t + "'");
      }
    }

    private String next(String what) {
      if (pos >= tokens.size()) {
        throw new IllegalArgumentException("expected " + what + " at the end");
      }
      return tokens.get(pos++);
    }

    private static boolean isSpecial(String t) {
      return switch (t) {
        case "!", "=", "==", "!=", "(", ")", ",", "<", ">" -> true;
        default -> false;
      };
    }

    private static List<String> tokenize(String s) {
      List<String> out = new ArrayList<>();
      int i = 0;
      while (i < s.length()) {
        char c = s.charAt(i);
        if (Character.isWhitespace(c)) {
          i++;
        } else if (c == '!' || c == '=') {
          boolean eq = i + 1 < s.length() && s.charAt(i + 1) == '=';
          out.add(eq ? c + "=" : String.valueOf(c));
          i += eq ? 2 : 1;
        } else if (c == '(' || c == ')' || c == ',' || c == '<' || c == '>') {
          out.add(String.valueOf(c));
          i++;
        } else {
          int start = i;
          while (i < s.length()
              && !Character.isWhitespace(s.charAt(i))
              && "!=(),<>".indexOf(s.charAt(i)) < 0) {
            i++;
          }
          out.add(s.substring(start, i));
        }
      }
      return out;
    }
  }
}
