/**
 * One runtime for every controller of the manager ({@link
 * dev.capk.vmieviction.runtime.ControllerRuntime}), on the official client's ControllerManager, and
 * its two-lane work queue. Imports nothing of this project.
 */
package dev.capk.vmieviction.runtime;
