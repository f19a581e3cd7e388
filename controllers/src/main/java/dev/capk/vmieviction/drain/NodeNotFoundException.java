package dev.capk.vmieviction.drain;

import io.kubernetes.client.openapi.ApiException;

/**
 * The node to cordon or drain does not exist. An {@link ApiException} with code 404, so callers can
 * treat it as one.
 */
public class NodeNotFoundException extends ApiException {
  private static final long serialVersionUID = 1L;

  private final String node;

  public NodeNotFoundException(String node) {
    super(404, "node \"" + node + "\" not found");
    this.node = node;
  }

  public String node() {
    return node;
  }

  @Override
  public String getMessage() {
    return "node \"" + node + "\" not found";
  }
}
