package dev.capk.vmieviction.workload;

import java.util.Optional;

/**
 * An informer's cache of one kind of infra object, read without a request. Empty is not an answer:
 * the cache may not have synced (or may never sync, when the controller's RBAC lacks list/watch),
 * and an object created a moment ago may not have reached it yet. So the caller reads an object it
 * does not find here from the API.
 */
@FunctionalInterface
public interface CachedObjects<T> {

  Optional<T> find(String namespace, String name);
}
