package dev.capk.vmieviction.kube;

import io.kubernetes.client.openapi.ApiException;

/**
 * A request the API server refused ({@link ApiStatus.Answer#REFUSED}), named: which request, on
 * which object, and the server's reason. Asking again will not change the answer until someone
 * changes what refused it (an admission policy, RBAC, the object), so callers back off and say so.
 */
public final class RequestRefused extends ApiException {

  /**
   * @param what the request and its object, e.g. "cordoning node n1"
   * @param cause the server's answer, from a server trusted to say nothing secret (the infra or
   *     management cluster); a guest cluster's refusals are described with {@link
   *     ApiStatus#describeRefusal}
   */
  public RequestRefused(String what, ApiException cause) {
    super(
        what + " refused: " + ApiStatus.describe(cause),
        cause,
        cause.getCode(),
        cause.getResponseHeaders(),
        cause.getResponseBody());
  }
}
