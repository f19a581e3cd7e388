package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LabelSelectorsTest {
  private static LabelSelectors.Requirement req(
      String key, LabelSelectors.Operator op, String... values) {
    return new LabelSelectors.Requirement(key, op, Set.of(values));
  }

  private static void parses(String selector, LabelSelectors.Requirement... expected) {
    assertEquals(List.of(expected), LabelSelectors.parse(selector), selector);
  }

  @Test
  void emptySelectorSelectsEverything() {
    assertTrue(LabelSelectors.parse("").isEmpty());
    assertTrue(LabelSelectors.parse("   ").isEmpty());
  }

  /** Matching is the API server's (the selector goes into the pod list): parsed to validate. */
  @Test
  void equalityInequalityExistenceAndSetOperatorsParseLikeKubernetes() {
    parses("app=web", req("app", LabelSelectors.Operator.EQUALS, "web"));
    parses("app==web", req("app", LabelSelectors.Operator.EQUALS, "web"));
    parses("app!=db", req("app", LabelSelectors.Operator.NOT_EQUALS, "db"));
    parses("app", req("app", LabelSelectors.Operator.EXISTS));
    parses("!app", req("app", LabelSelectors.Operator.DOES_NOT_EXIST));
    parses("app in (web, db)", req("app", LabelSelectors.Operator.IN, "web", "db"));
    parses("app notin (web,db)", req("app", LabelSelectors.Operator.NOT_IN, "web", "db"));
    parses("n>4", req("n", LabelSelectors.Operator.GREATER_THAN, "4"));
    parses("n<5", req("n", LabelSelectors.Operator.LESS_THAN, "5"));
    parses(
        " app = web , tier in (front) ",
        req("app", LabelSelectors.Operator.EQUALS, "web"),
        req("tier", LabelSelectors.Operator.IN, "front"));
  }

  @Test
  void qualifiedKeysAndEmptyValuesAreAccepted() {
    parses(
        "app.kubernetes.io/name=web",
        req("app.kubernetes.io/name", LabelSelectors.Operator.EQUALS, "web"));
    parses("a=", req("a", LabelSelectors.Operator.EQUALS, ""));
    parses("a==", req("a", LabelSelectors.Operator.EQUALS, ""));
    parses(
        "a=,b",
        req("a", LabelSelectors.Operator.EQUALS, ""),
        req("b", LabelSelectors.Operator.EXISTS));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "=web",
        "app in ()",
        "app in (a",
        "app in a",
        "app=web,",
        ",app",
        "app=we b",
        "-app=web",
        "app=web!",
        "x>y",
        "Bad_Prefix.COM/app=x",
        "app=" + "a123456789a123456789a123456789a123456789a123456789a123456789abcd",
        "app=(x)",
        "!",
        "app notin"
      })
  void invalidSelectorsAreRefusedWithTheSelectorInTheMessage(String selector) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> LabelSelectors.parse(selector));
    assertTrue(
        e.getMessage().startsWith("invalid label selector \"" + selector + "\": "), e.getMessage());
  }

  @Test
  void budgetSelectorsNullSelectsNothingEmptySelectsAll() {
    assertFalse(LabelSelectors.matches((V1LabelSelector) null, Map.of("a", "b")));
    assertTrue(LabelSelectors.matches(new V1LabelSelector(), Map.of()));
  }

  @Test
  void budgetSelectorsCombineMatchLabelsAndExpressions() {
    V1LabelSelector s =
        new V1LabelSelector()
            .matchLabels(Map.of("app", "web"))
            .matchExpressions(
                List.of(
                    new V1LabelSelectorRequirement()
                        .key("tier")
                        .operator("In")
                        .values(List.of("front", "edge")),
                    new V1LabelSelectorRequirement().key("canary").operator("DoesNotExist")));
    assertTrue(LabelSelectors.matches(s, Map.of("app", "web", "tier", "edge")));
    assertFalse(LabelSelectors.matches(s, Map.of("app", "web", "tier", "back")));
    assertFalse(LabelSelectors.matches(s, Map.of("app", "web", "tier", "front", "canary", "1")));
    assertFalse(LabelSelectors.matches(s, Map.of("tier", "front")));
    assertFalse(LabelSelectors.matches(s, null));
  }

  @Test
  void unknownBudgetOperatorNeverMatches() {
    V1LabelSelector s =
        new V1LabelSelector()
            .matchExpressions(
                List.of(
                    new V1LabelSelectorRequirement().key("a").operator("Gt").values(List.of("1"))));
    assertFalse(LabelSelectors.matches(s, Map.of("a", "5")));
  }
}
