package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LabelSelectorsTest {
  private static boolean sel(String selector, Map<String, String> labels) {
    return LabelSelectors.matches(LabelSelectors.parse(selector), labels);
  }

  @Test
  void emptySelectorSelectsEverything() {
    assertTrue(LabelSelectors.parse("").isEmpty());
    assertTrue(LabelSelectors.parse("   ").isEmpty());
    assertTrue(sel("", Map.of()));
  }

  @Test
  void equalityInequalityExistenceAndSetOperatorsMatchLikeKubernetes() {
    Map<String, String> web = Map.of("app", "web", "tier", "front", "n", "5");
    assertTrue(sel("app=web", web));
    assertTrue(sel("app==web", web));
    assertFalse(sel("app!=web", web));
    assertTrue(sel("app!=db", web));
    assertTrue(sel("missing!=x", web), "a missing label satisfies !=");
    assertTrue(sel("app", web));
    assertFalse(sel("!app", web));
    assertTrue(sel("!missing", web));
    assertTrue(sel("app in (web, db)", web));
    assertFalse(sel("app notin (web,db)", web));
    assertTrue(sel("missing notin (web)", web));
    assertTrue(sel("n>4", web));
    assertFalse(sel("n<5", web));
    assertTrue(sel(" app = web , tier in (front) ", web));
    assertFalse(sel("app=web,tier=back", web));
  }

  @Test
  void qualifiedKeysAndEmptyValuesAreAccepted() {
    assertTrue(sel("app.kubernetes.io/name=web", Map.of("app.kubernetes.io/name", "web")));
    assertTrue(sel("a=", Map.of("a", "")));
    assertEquals(2, LabelSelectors.parse("a=,b").size());
    assertTrue(sel("a==", Map.of("a", "")));
    assertFalse(sel("a=", Map.of("a", "x")));
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
