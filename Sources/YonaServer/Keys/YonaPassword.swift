import Foundation
import YonaCrypto

/// The secret the server issues to a user: 32 random bytes, base64url without padding on the wire.
/// It never prints itself and is only ever turned into a key, never stored.
struct YonaPassword: Sendable, CustomStringConvertible {
    static let byteCount = 32
    let bytes: [UInt8]

    static func generate() -> YonaPassword { YonaPassword(bytes: SecureRandom.bytes(byteCount))! }

    /// Parses the `Yona-Password` header value; nil if it cannot be one of ours.
    init?(header: String) {
        guard let decoded = Base64URL.decode(header), decoded.count == Self.byteCount else { return nil }
        bytes = decoded
    }

    /// A password recovered from storage (the new-device flow); nil unless it has the right length.
    init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The value the app stores and sends back verbatim.
    var wireValue: String { Base64URL.encode(bytes) }
    var description: String { "YonaPassword(redacted)" }
}

enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
