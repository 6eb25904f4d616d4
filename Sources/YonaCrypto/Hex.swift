/// Lowercase hexadecimal text of bytes (hash digests, tokens, address prefixes). Written digit by digit: the
/// `String(format: "%02x")` per byte it replaces went through Foundation's format parser once per byte, on the
/// analyzer's hot path among others (docs/performance.md).
public enum Hex {
    /// The sixteen digits as UTF-8 bytes, for writers of other layouts (a UUID's dashes).
    public static let digits = Array("0123456789abcdef".utf8)

    /// The value of one hex digit in either case, `nil` for any other byte.
    public static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    public static func lowercase(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var index = 0
            for byte in bytes {
                out[index] = digits[Int(byte >> 4)]
                out[index + 1] = digits[Int(byte & 0x0f)]
                index += 2
            }
            return index
        }
    }
}
