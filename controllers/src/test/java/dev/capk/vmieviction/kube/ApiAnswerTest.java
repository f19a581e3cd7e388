package dev.capk.vmieviction.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.ApiException;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The answer table of docs/design.md, row by row, with the bodies kube-apiserver sends. */
class ApiAnswerTest {

  private static String status(int code, String reason, String message) {
    return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\""
        + message
        + "\",\"reason\":\""
        + reason
        + "\",\"code\":"
        + code
        + "}";
  }

  /** The body of a JSON Patch whose test failed, or whose path is missing (the same answer). */
  static final String PATCH_NOT_APPLIED = status(422, "Invalid", RawApi.PATCH_NOT_APPLIED_MESSAGE);

  /** A ValidatingAdmissionPolicy's denial with the default reason (Invalid). */
  static final String POLICY_DENIAL =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
          + "\"nodes \\\"n\\\" is forbidden: ValidatingAdmissionPolicy 'no-cordon' with binding"
          + " 'no-cordon' denied request: cordons are not allowed\",\"reason\":\"Invalid\","
          + "\"details\":{\"name\":\"n\",\"kind\":\"nodes\",\"causes\":[{\"message\":\"x\"}]},"
          + "\"code\":422}";

  @Test
  void conflictIsARace() {
    assertEquals(
        RawApi.Meaning.CONFLICT,
        RawApi.meaning(409, status(409, "Conflict", "the object has been modified"), true));
  }

  @Test
  void aPatchThatDidNotApplyIsToBeCheckedAgainstTheObjectAsItIsNow() {
    assertEquals(RawApi.Meaning.PATCH_NOT_APPLIED, RawApi.meaning(422, PATCH_NOT_APPLIED, true));
  }

  @Test
  void anAdmissionDenialOrValidationErrorIsARefusalNotARace() {
    assertEquals(RawApi.Meaning.REFUSED, RawApi.meaning(422, POLICY_DENIAL, true));
    assertEquals(
        RawApi.Meaning.REFUSED,
        RawApi.meaning(
            422,
            "{\"message\":\"Node \\\"n\\\" is invalid\",\"reason\":\"Invalid\","
                + "\"details\":{\"causes\":[{\"reason\":\"FieldValueInvalid\"}]},\"code\":422}",
            true));
  }

  @Test
  void badRequestsUnauthorizedAndForbiddenAreRefusals() {
    for (int code : new int[] {400, 401, 403, 405, 413, 415}) {
      assertEquals(RawApi.Meaning.REFUSED, RawApi.meaning(code, "", true), "HTTP " + code);
    }
  }

  @Test
  void notFoundIsAnAnswerWhereAbsenceIsOneAndARefusalWhereTheObjectMustExist() {
    assertEquals(RawApi.Meaning.GONE, RawApi.meaning(404, status(404, "NotFound", "x"), false));
    assertEquals(RawApi.Meaning.REFUSED, RawApi.meaning(404, status(404, "NotFound", "x"), true));
  }

  @Test
  void noAnswerTooManyRequestsAndServerErrorsSayNothingAboutTheObject() {
    for (int code : new int[] {0, 408, 429, 500, 502, 503, 504}) {
      assertEquals(RawApi.Meaning.TRANSIENT, RawApi.meaning(code, "", false), "HTTP " + code);
    }
    assertEquals(
        RawApi.Meaning.TRANSIENT,
        RawApi.meaning(new ApiException(new IOException("reset")), false));
  }

  @Test
  void aRefusalIsDescribedWithTheServersReasonAndWithoutAnythingShapedLikeACredential() {
    ApiException denial = new ApiException("x", 422, Map.of(), POLICY_DENIAL);
    String described = RawApi.describeRefusal(denial);
    assertTrue(described.startsWith("HTTP 422 Invalid: "), described);
    assertTrue(described.contains("ValidatingAdmissionPolicy 'no-cordon'"), described);

    String token = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJzdWIiOiJzeXN0ZW0iLCJ4Ijp9.c2lnbmF0dXJl";
    ApiException echoing =
        new ApiException(
            "x", 403, Map.of(), status(403, "Forbidden", "you sent Bearer " + token + " here"));
    String safe = RawApi.describeRefusal(echoing);
    assertFalse(safe.contains(token), safe);
    assertFalse(safe.contains(token.substring(0, 30)), safe);
    assertTrue(safe.contains("[redacted]"), safe);
  }
}
