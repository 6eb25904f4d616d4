import Foundation
import NIOPosix

/// Whether a URL the server is asked to post to (a Web Push endpoint a device registered) leads to the public
/// internet: https, and every address its host resolves to a public unicast address. Loopback, private, link-local,
/// shared, documentation, multicast and reserved ranges (and IPv6 forms embedding them) are refused, so the server is
/// no relay into its own network (docs/threat-model.md "Web Push endpoints").
package enum PublicEndpoint {
    package struct Refused: Error, Equatable {
        package let reason: String
    }

    /// `allowPrivate` (tests only) also admits http and private addresses.
    package static func check(_ raw: String, allowPrivate: Bool) async throws(Refused) -> URL {
        let url = try parse(raw, allowPrivate: allowPrivate)
        if allowPrivate { return url }
        let host = url.host!
        let addresses = await resolve(host)
        guard !addresses.isEmpty else { throw Refused(reason: "UNRESOLVABLE") }
        guard addresses.allSatisfy(isPublic) else { throw Refused(reason: "PRIVATE_ADDRESS") }
        return url
    }

    /// The URL's shape alone: absolute https (http too with `allowPrivate`), a host, no user info, at most 2 KiB.
    package static func parse(_ raw: String, allowPrivate: Bool) throws(Refused) -> URL {
        guard raw.utf8.count <= 2048, let url = URL(string: raw), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else { throw Refused(reason: "MALFORMED") }
        guard scheme == "https" || (allowPrivate && scheme == "http") else { throw Refused(reason: "NOT_HTTPS") }
        if !allowPrivate, let literal = IPAddressBytes(literal: host), !isPublic(literal) { throw Refused(reason: "PRIVATE_ADDRESS") }
        return url
    }

    /// Every address `host` resolves to (none when it does not resolve), looked up off the event loops.
    package static func resolve(_ host: String) async -> [IPAddressBytes] {
        if let literal = IPAddressBytes(literal: host) { return [literal] }
        // `runIfActive` throws only once the pool has stopped (the process is shutting down): no address, as for a name
        // that does not resolve. Callers count that (`WEBPUSH_UNRESOLVABLE`, a retry) or refuse it (400).
        return (try? await NIOThreadPool.singleton.runIfActive { lookUp(host) }) ?? []
    }

    private static func lookUp(_ host: String) -> [IPAddressBytes] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [IPAddressBytes] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        found.append(IPAddressBytes(bytes: withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) }))
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        found.append(IPAddressBytes(bytes: withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }))
                    }
                default: break
                }
            }
            next = entry.pointee.ai_next
        }
        return found
    }

    /// Public unicast only (RFC 6890's special-purpose registries, and the IPv6 forms that carry an IPv4 address).
    package static func isPublic(_ address: IPAddressBytes) -> Bool {
        let b = address.bytes
        if b.count == 4 {
            switch (b[0], b[1]) {
            case (0, _), (10, _), (127, _), (169, 254), (192, 168), (224..., _): return false
            case (100, 64...127), (172, 16...31), (198, 18...19): return false
            case (192, 0) where b[2] == 0 || b[2] == 2: return false
            case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113, (192, 88) where b[2] == 99: return false
            default: return true
            }
        }
        guard b.count == 16 else { return false }
        let embeddedV4 = IPAddressBytes(bytes: Array(b[12..<16]))
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return isPublic(embeddedV4) } // ::ffff:a.b.c.d
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B { return isPublic(embeddedV4) } // 64:ff9b::/96 NAT64
        if b[0] == 0x20, b[1] == 0x02 { return isPublic(IPAddressBytes(bytes: Array(b[2..<6]))) } // 2002::/16 6to4
        // global unicast is 2000::/3, less IETF assignments (2001::/23, Teredo among them) and documentation (2001:db8::/32)
        guard b[0] & 0xE0 == 0x20 else { return false }
        if b[0] == 0x20, b[1] == 0x01, b[2] < 0x02 { return false }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return false }
        return true
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address in network order.
package struct IPAddressBytes: Sendable, Equatable {
    package let bytes: [UInt8]

    package init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A literal address as a URL's host writes it (`10.0.0.1`, `[::1]` or `::1`); nil for a name.
    package init?(literal host: String) {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, bare, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }
}
