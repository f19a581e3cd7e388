/**
 * The process: {@code Main} (the manager or the drain command), flags ({@code ManagerOptions}),
 * informers, leader election, metrics and health endpoints, and the wiring of the controllers. The
 * only package that may import every other; none imports it.
 */
package dev.capk.vmieviction.manager;
