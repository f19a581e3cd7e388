/**
 * One controller runtime for every controller of the manager: {@link
 * dev.capk.vmieviction.runtime.ControllerRuntime} starts each {@link
 * dev.capk.vmieviction.runtime.ManagedController}'s informers, runs all workers under one leader
 * election, answers readiness once every cache has synced, and waits for reconciles in flight on
 * shutdown. Built on the official client's ControllerManager; imports nothing of this project.
 */
package dev.capk.vmieviction.runtime;
