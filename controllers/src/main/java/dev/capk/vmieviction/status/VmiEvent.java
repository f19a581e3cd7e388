package dev.capk.vmieviction.status;

import java.time.Instant;

/**
 * An Event about a VMI, as much of it as the status reads.
 *
 * @param uid the VMI's UID (the event's involvedObject.uid)
 * @param lastSeen when the event's series last occurred (lastTimestamp, else eventTime, else
 *     firstTimestamp)
 */
public record VmiEvent(String uid, String reason, String message, Instant lastSeen) {}
