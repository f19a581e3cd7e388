/** Time as the controllers count it: deadlines ({@link dev.capk.vmieviction.time.Deadline}) and Go's duration syntax. */
package dev.capk.vmieviction.time;
