package dev.capk.vmieviction.kube;

import io.kubernetes.client.openapi.ApiException;

/**
 * A request the API server refused ({@link RawApi.Meaning#REFUSED}), named: which request, on which
 * object, and why. Asking again will not help: callers back off and say so.
 */
public final class RequestRefused extends ApiException {

  /**
   * {@code what}: e.g. "cordoning node n1"; {@code cause} from a server trusted to say nothing
   * secret (a guest's refusals: {@link RawApi#describeRefusal}).
   */
  public RequestRefused(String what, ApiException cause) {
    super(
        what + " refused: " + RawApi.describe(cause),
        cause,
        cause.getCode(),
        cause.getResponseHeaders(),
        cause.getResponseBody());
  }
}
