package dev.capk.vmieviction.manager;

import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * controller-runtime style bind addresses: {@code :8080}, {@code 127.0.0.1:8080}, {@code 0}
 * (disabled).
 */
public final class BindAddress {
  private BindAddress() {}

  public static boolean disabled(String address) {
    return address == null || address.isBlank() || address.equals("0");
  }

  /** The socket address; port 0 asks for any free port. */
  public static InetSocketAddress parse(String address) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException(
          "bind address \"" + address + "\" has no port (e.g. :8080)");
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bind address \"" + address + "\" has no valid port");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("bind address \"" + address + "\" port out of range");
    }
    return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
  }

  static Optional<String> problem(String flag, String address) {
    if (disabled(address)) {
      return Optional.empty();
    }
    try {
      parse(address);
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of(flag + ": " + e.getMessage());
    }
  }
}
