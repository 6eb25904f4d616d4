import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A CIDR block such as `10.0.0.0/8` or `fd00::/8`.
package struct CIDR: Sendable, Equatable {
    package let network: [UInt8]
    package let prefixLength: Int

    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = Self.parse(String(parts[0])) else { return nil }
        let maxLength = address.count * 8
        let length = parts.count == 2 ? Int(parts[1]) : maxLength
        guard let length, (0...maxLength).contains(length) else { return nil }
        network = address
        prefixLength = length
    }

    package func contains(_ address: [UInt8]) -> Bool {
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
    package static func parse(_ text: String) -> [UInt8]? {
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
