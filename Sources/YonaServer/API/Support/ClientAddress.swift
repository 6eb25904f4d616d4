import Foundation
import Vapor
import YonaDomain

#if canImport(Glibc)
    import Glibc
#endif

/// A CIDR block such as `10.0.0.0/8` or `fd00::/8`.
struct CIDR: Sendable, Equatable {
    let network: [UInt8]
    let prefixLength: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = Self.parse(String(parts[0])) else { return nil }
        let maxLength = address.count * 8
        let length = parts.count == 2 ? Int(parts[1]) : maxLength
        guard let length, (0...maxLength).contains(length) else { return nil }
        network = address
        prefixLength = length
    }

    func contains(_ address: [UInt8]) -> Bool {
        guard address.count == network.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address, network) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if a & mask != b & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// IPv4 as 4 bytes, IPv6 as 16 (an IPv4-mapped IPv6 address counts as IPv4).
    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
            return bytes
        }
        return nil
    }
}

/// The address a rate limit counts: the connection's peer or, when that peer is a trusted proxy, the last
/// `X-Forwarded-For` entry that is not a trusted proxy.
enum ClientAddress {
    /// The rate-limit subject of a request: its client's address, canonical (one spelling per address) and, for
    /// IPv6, its /64 (one subscriber's whole prefix).
    static func of(_ request: Request, trustedProxies: [CIDR]) -> String {
        bucket(address(of: request, trustedProxies: trustedProxies))
    }

    static func address(of request: Request, trustedProxies: [CIDR]) -> String {
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
    static func bucket(_ address: String) -> String {
        guard let bytes = CIDR.parse(address) else { return address }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return bytes.prefix(8).map { String(format: "%02x", $0) }.joined() + "/64"
    }

    private static func isTrusted(_ address: String, _ proxies: [CIDR]) -> Bool {
        guard let bytes = CIDR.parse(address) else { return false }
        return proxies.contains { $0.contains(bytes) }
    }
}
