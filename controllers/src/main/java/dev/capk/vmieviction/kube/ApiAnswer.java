package dev.capk.vmieviction.kube;

import io.kubernetes.client.openapi.ApiException;

/**
 * What an API answer that is not a success means for the caller: the one table every write (and
 * every read that feeds a decision) goes by. A conflict is a race, to be read again and retried; a
 * refusal will not succeed as sent, however often it is repeated; a transient failure says nothing
 * about the object at all. docs/design.md gives the same table; ApiAnswerTest checks each row.
 */
public enum ApiAnswer {
  /** 409: the object changed since it was read. Read it again and retry (bounded). */
  CONFLICT,
  /**
   * 422 from a JSON Patch that did not apply (a {@code test} failed, or a path it names is
   * missing): the server does not say which. The caller reads the object again: changed in what the
   * patch depends on, a {@link #CONFLICT}; unchanged, a {@link #REFUSED}.
   */
  PATCH_NOT_APPLIED,
  /** 404 where absence is an answer (a read, a delete): the object is gone. */
  GONE,
  /**
   * 400, 401, 403, 404 where the object must exist, 405, 413, 415, 422 (validation, an admission
   * denial), any other 4xx: the request will not succeed as sent. Named in a Warning, backed off.
   */
  REFUSED,
  /**
   * No answer (connection refused or reset, timeout), 408, 429 (API Priority and Fairness), 5xx:
   * nothing was learnt about the object. Retried with backoff, never taken as "absent".
   */
  TRANSIENT;

  /**
   * The message kube-apiserver gives a JSON Patch that does not apply to the object (its patch
   * handler answers {@code NewGenericServerResponse(422, ...)} whatever the operation that failed).
   */
  static final String PATCH_NOT_APPLIED_MESSAGE =
      "the server rejected our request due to an error in our request";

  /**
   * @param mustExist the request names an object that must be there (a patch of a node we read): a
   *     404 is then a refusal, not an answer
   */
  public static ApiAnswer of(int code, String body, boolean mustExist) {
    if (code == 0 || code == 408 || code == 429 || code >= 500) {
      return TRANSIENT;
    }
    return switch (code) {
      case 409 -> CONFLICT;
      case 404 -> mustExist ? REFUSED : GONE;
      case 422 -> patchNotApplied(ApiStatus.parse(code, body)) ? PATCH_NOT_APPLIED : REFUSED;
      default -> REFUSED;
    };
  }

  public static ApiAnswer of(ApiException e, boolean mustExist) {
    return of(e.getCode(), e.getResponseBody(), mustExist);
  }

  /**
   * A 422 without details and with the patch handler's generic message: not a validation error
   * (those name the kind and the fields) nor an admission denial (those name the policy or
   * webhook).
   */
  private static boolean patchNotApplied(ApiStatus status) {
    return status.causes().isEmpty() && PATCH_NOT_APPLIED_MESSAGE.equals(status.message());
  }
}
