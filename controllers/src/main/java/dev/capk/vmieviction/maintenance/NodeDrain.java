package dev.capk.vmieviction.maintenance;

import dev.capk.vmieviction.drain.DrainOptions;
import dev.capk.vmieviction.drain.DrainRefusedException;
import dev.capk.vmieviction.drain.DrainResult;
import io.kubernetes.client.openapi.ApiException;

/**
 * One blocking drain of a node: {@link dev.capk.vmieviction.drain.NodeDrainer#drain}, or a stand-in
 * in tests.
 */
@FunctionalInterface
public interface NodeDrain {
  DrainResult drain(String node, DrainOptions options) throws ApiException, DrainRefusedException;
}
