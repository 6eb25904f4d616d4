import Foundation
import Vapor
import YonaConfig
import YonaCrypto
import YonaDomain

#if canImport(Glibc)
    import Glibc
#endif

/// The address a rate limit counts: the connection's peer or, when that peer is a trusted proxy, the last
/// `X-Forwarded-For` entry that is not a trusted proxy.
package enum ClientAddress {
    /// The rate-limit subject of a request: its client's address, canonical (one spelling per address) and, for
    /// IPv6, its /64 (one subscriber's whole prefix).
    package static func of(_ request: Request, trustedProxies: [CIDR]) -> String {
        bucket(address(of: request, trustedProxies: trustedProxies))
    }

    package static func address(of request: Request, trustedProxies: [CIDR]) -> String {
        let peer = request.remoteAddress?.ipAddress ?? "unknown"
        guard isTrusted(peer, trustedProxies) else { return peer }
        let forwarded = request.headers[.xForwardedFor]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in forwarded.reversed() where !isTrusted(hop, trustedProxies) {
            return CIDR.parse(hop) == nil ? peer : hop
        }
        return forwarded.first ?? peer
    }

    /// `1.2.3.4` and `::ffff:1.2.3.4` are one client; `2001:db8::1` and `2001:db8::2` are one /64.
    package static func bucket(_ address: String) -> String {
        guard let bytes = CIDR.parse(address) else { return address }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return Hex.lowercase(bytes.prefix(8)) + "/64"
    }

    private static func isTrusted(_ address: String, _ proxies: [CIDR]) -> Bool {
        guard let bytes = CIDR.parse(address) else { return false }
        return proxies.contains { $0.contains(bytes) }
    }
}
