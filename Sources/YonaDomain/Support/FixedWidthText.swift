import Foundation
import YonaCrypto

/// Fixed-width text the server writes on every read (timestamps, days, ids in links), written byte by byte instead
/// of through `String(format:)` and `uuidString.lowercased()`: both showed in the profile read's CPU profile
/// (docs/performance.md, "Formatting without Foundation's format parser").
extension Array where Element == UInt8 {
    /// Appends `value` in decimal, zero-padded to at least `width` digits (a negative value gets a leading `-`).
    package mutating func appendDigits(_ value: Int, width: Int) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            appendDigits(-value, width: width)
            return
        }
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        if digits.count < width { append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits.count)) }
        append(contentsOf: digits.reversed())
    }

    /// Appends `yyyy-MM-dd`.
    package mutating func appendDay(year: Int, month: Int, day: Int) {
        appendDigits(year, width: 4)
        append(UInt8(ascii: "-"))
        appendDigits(month, width: 2)
        append(UInt8(ascii: "-"))
        appendDigits(day, width: 2)
    }
}

extension UUID {
    /// `uuidString.lowercased()`, as every link and stored id spells a UUID.
    package var lowercasedString: String {
        withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var index = 0
                for (position, byte) in raw.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        out[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    out[index] = Hex.digits[Int(byte >> 4)]
                    out[index + 1] = Hex.digits[Int(byte & 0x0f)]
                    index += 2
                }
                return index
            }
        }
    }

    /// `UUID(uuidString:)` without Foundation's `sscanf`: the 36 characters `8-4-4-4-12` of hex digits in either case,
    /// nothing before or after. Every authenticated call parses a few (path, `requestingUserId`, `requestingDeviceId`).
    package init?(text: some StringProtocol) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var utf8 = text.utf8.makeIterator()
            var position = 0
            var written = 0
            while written < 16 {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard utf8.next() == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = utf8.next().flatMap(Hex.value), let low = utf8.next().flatMap(Hex.value) else { return false }
                out[written] = high << 4 | low
                written += 1
                position += 2
            }
            return utf8.next() == nil
        }
        guard parsed else { return nil }
        self.init(uuid: bytes)
    }
}

/// `yyyy-MM-dd` and `YYYY-Www`, as the apps read days and weeks.
package enum CalendarText {
    package static func day(year: Int, month: Int, day: Int) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(10)
        text.appendDay(year: year, month: month, day: day)
        return String(decoding: text, as: UTF8.self)
    }

    package static func week(year: Int, week: Int) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(8)
        text.appendDigits(year, width: 4)
        text.append(contentsOf: "-W".utf8)
        text.appendDigits(week, width: 2)
        return String(decoding: text, as: UTF8.self)
    }
}

/// Fixed-width text read by its shape, where each `9` stands for one ASCII digit and every other byte for itself
/// (`"2016-03-15"` in shape `"9999-99-99"` is `[2016, 3, 15]`); nil when the text has another shape. A regex literal
/// in a function body is compiled again on every call (docs/performance.md).
package enum FixedShape {
    package static func numbers(_ bytes: UnsafeBufferPointer<UInt8>, shape: StaticString) -> [Int]? {
        guard bytes.count == shape.utf8CodeUnitCount else { return nil }
        var numbers: [Int] = []
        var current: Int? = nil
        for index in 0..<bytes.count {
            let expected = shape.utf8Start[index]
            if expected == UInt8(ascii: "9") {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
                current = (current ?? 0) * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            } else {
                guard bytes[index] == expected else { return nil }
                if let number = current { numbers.append(number) }
                current = nil
            }
        }
        if let number = current { numbers.append(number) }
        return numbers
    }
}

extension String {
    /// `FixedShape.numbers` of this text.
    package func numbers(inShape shape: StaticString) -> [Int]? {
        var text = self
        return text.withUTF8 { FixedShape.numbers($0, shape: shape) }
    }
}
