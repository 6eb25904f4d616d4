import Foundation
import YonaCrypto

/// The secret the server issues to a user: 32 random bytes, on the wire `AES:128:` and the bytes in base64url
/// without padding. The marker is Yona's (the apps and Yona's suite expect every password to carry it); what
/// follows is a libsodium secret, not an AES key (docs/compatibility.md). It never prints itself and is only ever
/// turned into a key, never stored.
package struct YonaPassword: Sendable, CustomStringConvertible {
    package static let byteCount = 32
    package static let wireMarker = "AES:128:"
    package let bytes: [UInt8]

    package static func generate() -> YonaPassword { YonaPassword(bytes: SecureRandom.bytes(byteCount))! }

    /// Parses the `Yona-Password` header value, with or without the marker (passwords issued before it carried
    /// none); nil if it cannot be one of ours.
    package init?(header: String) {
        let encoded = header.hasPrefix(Self.wireMarker) ? String(header.dropFirst(Self.wireMarker.count)) : header
        guard let decoded = Base64URL.decode(encoded), decoded.count == Self.byteCount else { return nil }
        bytes = decoded
    }

    /// A password recovered from storage (the new-device flow); nil unless it has the right length.
    package init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The value the app stores and sends back verbatim.
    package var wireValue: String { Self.wireMarker + Base64URL.encode(bytes) }
    package var description: String { "YonaPassword(redacted)" }
}

package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
