/**
 * Time as the controllers count it: deadlines ({@link dev.capk.vmieviction.time.Deadline}, on the
 * monotonic or the wall clock) and Go's duration syntax ({@link
 * dev.capk.vmieviction.time.GoDuration}). Imports nothing of this project.
 */
package dev.capk.vmieviction.time;
