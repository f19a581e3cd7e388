package dev.capk.vmieviction.drain;

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
  /** Matching is the API server's (the selector goes into the pod list): only checked here. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "   ",
        "app=web",
        "app==web",
        "app!=db",
        "app",
        "!app",
        "app in (web, db)",
        "app notin (web,db)",
        "n>4",
        "n<5",
        " app = web , tier in (front) ",
        "app.kubernetes.io/name=web",
        "a=",
        "a==",
        "a=,b",
        "a!=",
        "n>-4",
        "a in (x , y),b notin (z)",
        "example.com/a.b_c-d=E.f_g-h"
      })
  void kubectlsOperatorsQualifiedKeysAndEmptyValuesAreAccepted(String selector) {
    LabelSelectors.check(selector);
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
        "app notin",
        "a in (x,)",
        "a in (x),",
        "a=b,,c=d",
        "x.example.com/ab/cd=e"
      })
  void invalidSelectorsAreRefusedWithTheSelectorInTheMessage(String selector) {
    assertThrows(
        IllegalArgumentException.class,
        () -> LabelSelectors.check("a".repeat(254) + "/b=c"),
        "a key prefix is at most 253 characters");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> LabelSelectors.check(selector));
    assertTrue(
        e.getMessage().startsWith("invalid label selector \"" + selector + "\": "), e.getMessage());
  }

  @Test
  void theMessageNamesTheFirstRequirementThatCannotBeParsed() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> LabelSelectors.check("a=b, c in d,e"));
    assertTrue(
        e.getMessage()
            .startsWith(
                "invalid label selector \"a=b, c in d,e\": cannot parse"
                    + " requirement \"c in d,e\""),
        e.getMessage());
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
