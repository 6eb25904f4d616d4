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

/// Base64url without padding (RFC 4648 §5). Byte by byte: the password header is decoded on every authenticated
/// call, and Foundation's `replacingOccurrences` and grapheme-wise checks it used showed in the read profile.
package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        var text = Array(Data(bytes).base64EncodedString().utf8)
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        for index in text.indices {
            switch text[index] {
            case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [UInt8]? {
        var standard: [UInt8] = []
        standard.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        standard.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4))
        return Data(base64Encoded: Data(standard)).map { Array($0) }
    }
}
