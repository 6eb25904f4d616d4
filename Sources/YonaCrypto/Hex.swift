/// Lowercase hexadecimal text of bytes (hash digests, tokens, address prefixes). Written digit by digit: the
/// `String(format: "%02x")` per byte it replaces went through Foundation's format parser once per byte, on the
/// analyzer's hot path among others (docs/performance.md).
public enum Hex {
    /// The sixteen digits as UTF-8 bytes, for writers of other layouts (a UUID's dashes).
    public static let digits = Array("0123456789abcdef".utf8)

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
