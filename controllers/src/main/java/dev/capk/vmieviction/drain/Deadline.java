package dev.capk.vmieviction.drain;

import java.time.Duration;

/** The drain's timeout as a point on the monotonic clock; {@link Duration#ZERO} means none. */
final class Deadline {
    private final long at;
    private final boolean none;

    private Deadline(long at, boolean none) {
        this.at = at;
        this.none = none;
    }

    static final Deadline NONE = new Deadline(0, true);

    static Deadline after(Duration timeout) {
        if (timeout.isZero()) {
            return new Deadline(0, true);
        }
        return new Deadline(System.nanoTime() + timeout.toNanos(), false);
    }

    boolean none() {
        return none;
    }

    boolean passed() {
        return !none && System.nanoTime() - at >= 0;
    }

    long remainingNanos() {
        return none ? Long.MAX_VALUE : Math.max(0, at - System.nanoTime());
    }

    /** {@code d}, or less if the deadline comes first. */
    long capNanos(Duration d) {
        return Math.min(d.toNanos(), remainingNanos());
    }
}
