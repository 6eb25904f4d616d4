import Foundation
import Testing

@testable import YonaDomain

/// The one-pass encoder behind every HAL document against Foundation's `JSONEncoder` (with `.withoutEscapingSlashes`,
/// as the server configured it): the same JSON for every shape the `Encodable` API can write in order, members in the
/// order they were encoded, and `nil` (so the server falls back to Foundation) for everything it does not write the
/// same way. The debug build also checks every document the rest of the suite renders (`Response.hal`).
@Suite struct CompactJSONEncoderTests {
    static let foundation: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func sameJSON<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = try foundation.encode(value)
        let written = try #require(CompactJSONEncoder.encode(value), sourceLocation: sourceLocation)
        #expect(
            try CompactJSONEncoder.canonical(Data(written)) == CompactJSONEncoder.canonical(expected),
            "\(String(decoding: written, as: UTF8.self)) against \(String(decoding: expected, as: UTF8.self))",
            sourceLocation: sourceLocation)
    }

    @Test func stringsAreEscapedByteForByteAsFoundationEscapesThem() throws {
        var strings = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        strings += ["", "a\"b\\c/d", "\u{2028}\u{2029}\u{FEFF}", "é😀\u{7F}", "tab\there\nand\r\u{8}\u{C}\u{1F}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let scalars = (0..<Int.random(in: 0...12, using: &generator)).map { _ -> Character in
                let ranges: [ClosedRange<UInt32>] = [0...0x7F, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
                let value = UInt32.random(in: ranges.randomElement(using: &generator)!, using: &generator)
                return Character(UnicodeScalar(value)!)
            }
            strings.append(String(scalars))
        }
        for string in strings {
            // One string in an array: no member order involved, so the bytes themselves must be Foundation's.
            let written = try #require(CompactJSONEncoder.encode([string]))
            #expect(written == Array(try Self.foundation.encode([string])), "\(Array(string.unicodeScalars))")
            #expect(try JSONDecoder().decode([String].self, from: Data(written)) == [string])
        }
    }

    @Test func integersFromEveryWidthAndEdge() throws {
        try Self.sameJSON([Int.min, -1, 0, 1, Int.max])
        try Self.sameJSON([Int8.min, Int8.max])
        try Self.sameJSON([Int16.min, Int16.max])
        try Self.sameJSON([Int32.min, Int32.max])
        try Self.sameJSON([Int64.min, Int64.max])
        try Self.sameJSON([UInt.min, UInt.max])
        try Self.sameJSON([UInt8.max])
        try Self.sameJSON([UInt16.max])
        try Self.sameJSON([UInt32.max])
        try Self.sameJSON([UInt64.max, 10, 9, 100, 99])
        var generator = SystemRandomNumberGenerator()
        try Self.sameJSON((0..<1_000).map { _ in Int64.random(in: .min ... .max, using: &generator) })
    }

    @Test func randomDocumentsAreFoundationsJSON() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_500 {
            try Self.sameJSON(Tree.random(depth: 4, using: &generator))
        }
    }

    @Test func membersKeepTheOrderTheyWereEncodedIn() throws {
        struct Ordered: Encodable {
            let zulu = 1
            let alpha = "a"
            let mike: [Int]? = [1]
            let none: Int? = nil
            let inner = Inner()
        }
        struct Inner: Encodable {
            let yankee = true
            let bravo: String? = "b"
        }
        let written = try #require(CompactJSONEncoder.encode(Ordered()))
        #expect(String(decoding: written, as: UTF8.self) == #"{"zulu":1,"alpha":"a","mike":[1],"inner":{"yankee":true,"bravo":"b"}}"#)
    }

    @Test func floatingPointNumbersAndDatesAreWrittenByteForByteAsFoundationWritesThem() throws {
        var generator = SystemRandomNumberGenerator()
        var doubles: [Double] = [
            0, -0.0, 1, -1, 0.5, 0.1, 100, 1e15, 1e16, 1e21, 1e22, 1e300, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        var floats: [Float] = [0, 1, 0.1, .greatestFiniteMagnitude, .leastNonzeroMagnitude]
        for _ in 0..<20_000 {
            let double = Double(bitPattern: UInt64.random(in: .min ... .max, using: &generator))
            if double.isFinite { doubles.append(double) }
            doubles.append(Double(Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator)) / 1_000)
            let float = Float(bitPattern: UInt32.random(in: .min ... .max, using: &generator))
            if float.isFinite { floats.append(float) }
        }
        #expect(try #require(CompactJSONEncoder.encode(doubles)) == Array(try Self.foundation.encode(doubles)))
        #expect(try #require(CompactJSONEncoder.encode(floats)) == Array(try Self.foundation.encode(floats)))
        // A date is its seconds since 2001 under Foundation's default strategy.
        let dates = doubles.prefix(2_000).map { Date(timeIntervalSinceReferenceDate: $0) }
        #expect(try #require(CompactJSONEncoder.encode(dates)) == Array(try Self.foundation.encode(dates)))
        let read = try JSONDecoder().decode([Date].self, from: CompactJSONEncoder.data(dates))
        #expect(read == dates)
    }

    @Test func whatFoundationWritesWithItsStrategiesFallsBack() throws {
        struct Wrapped<T: Encodable>: Encodable { let value: T }
        #expect(CompactJSONEncoder.encode(Wrapped(value: URL(string: "https://example.org/a")!)) == nil)
        #expect(CompactJSONEncoder.encode(Wrapped(value: Decimal(3))) == nil)
        #expect(CompactJSONEncoder.encode([Wrapped(value: [Decimal(1)])]) == nil)
        // Foundation refuses these; falling back lets it.
        #expect(CompactJSONEncoder.encode(Wrapped(value: Double.infinity)) == nil)
        #expect(CompactJSONEncoder.encode([Float.nan]) == nil)
        #expect(throws: EncodingError.self) { try CompactJSONEncoder.data([Double.nan]) }
        // `data` is Foundation's answer where the one-pass encoder has none.
        let url = Wrapped(value: URL(string: "https://example.org/a")!)
        #expect(try CompactJSONEncoder.data(url) == Self.foundation.encode(url))
    }

    @Test func dataIsBase64AsFoundationWritesIt() throws {
        let blobs = (0..<200).map { length in Data((0..<length).map { _ in UInt8.random(in: 0...255) }) }
        #expect(try #require(CompactJSONEncoder.encode(blobs)) == Array(try Self.foundation.encode(blobs)))
    }

    @Test func containersUsedOutOfOrderFallBack() throws {
        // A key encoded twice: Foundation keeps the last value.
        #expect(CompactJSONEncoder.encode(Misuse.duplicateKey) == nil)
        // A nested container written after its parent went on: it would land in the wrong place when streamed.
        #expect(CompactJSONEncoder.encode(Misuse.nestedAfterParent) == nil)
        // A container kept past the end of its value, written into the next value's object.
        #expect(CompactJSONEncoder.encode(Misuse.escapedContainer) == nil)
        #expect(CompactJSONEncoder.encode(Misuse.superEncoder) == nil)
        #expect(CompactJSONEncoder.encode(Misuse.twoSingleValues) == nil)
        // Each of these is still JSON to Foundation: the server answers with Foundation's bytes.
        for misuse in [Misuse.duplicateKey, .nestedAfterParent, .superEncoder] {
            #expect(throws: Never.self) { try Self.foundation.encode(misuse) }
        }
    }

    @Test func aRefusalTheTypeSwallowsStillFallsBack() throws {
        // A type that tries a write and goes on when it fails: Foundation's bytes, not half a member.
        for swallowed in Swallowing.allCases {
            #expect(CompactJSONEncoder.encode(swallowed) == nil, "\(swallowed)")
            let fallback = try CompactJSONEncoder.data(swallowed)
            #expect(try CompactJSONEncoder.canonical(fallback) == CompactJSONEncoder.canonical(Self.foundation.encode(swallowed)))
        }
    }

    @Test func wellFormedShapesThatLookUnusualStillStream() throws {
        try Self.sameJSON(Shapes())
        try Self.sameJSON([Shapes(), Shapes()])
        try Self.sameJSON(["one": [Shapes()], "two": []])
        try Self.sameJSON(Optional<Int>.none)
        try Self.sameJSON([Int?.none, 1])
        try Self.sameJSON("top-level string")
        try Self.sameJSON([Empty()])
        // Foundation refuses a top-level value that encodes nothing; falling back lets it say so.
        #expect(CompactJSONEncoder.encode(Empty()) == nil)
    }
}

private struct Key: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

/// A value that encodes nothing: Foundation writes `{}`.
private struct Empty: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

/// Legal uses of the API in order that streaming must follow: two `container(keyedBy:)` calls for one object, a nested
/// container left open when its parent goes on, a single-value container wrapping an object, keys that need escaping.
private struct Shapes: Encodable {
    func encode(to encoder: any Encoder) throws {
        var first = encoder.container(keyedBy: Key.self)
        try first.encode(1, forKey: Key("a"))
        var nested = first.nestedContainer(keyedBy: Key.self, forKey: Key("nested"))
        try nested.encode("x", forKey: Key("inner \"quoted\""))
        var list = nested.nestedUnkeyedContainer(forKey: Key("list"))
        try list.encode(true)
        var deeper = list.nestedContainer(keyedBy: Key.self)
        try deeper.encodeNil(forKey: Key("nothing"))
        try list.encode(Optional<String>.none)
        try first.encode([Empty()], forKey: Key("after"))
        var again = encoder.container(keyedBy: Key.self)
        try again.encode(Wrapper(inner: ["k": 2]), forKey: Key("wrapped"))
        try again.encodeIfPresent(Optional<Int>.none, forKey: Key("absent"))
        try again.encodeIfPresent(Optional<Int>.some(3), forKey: Key("present"))
        var emptyList = again.nestedUnkeyedContainer(forKey: Key("emptyList"))
        _ = emptyList.nestedUnkeyedContainer()
    }

    struct Wrapper: Encodable {
        let inner: [String: Int]
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(inner)
        }
    }
}

private enum Misuse: Encodable {
    case duplicateKey, nestedAfterParent, escapedContainer, superEncoder, twoSingleValues

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .duplicateKey:
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(1, forKey: Key("a"))
            try container.encode(2, forKey: Key("a"))
        case .nestedAfterParent:
            var container = encoder.container(keyedBy: Key.self)
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: Key("n"))
            try container.encode(1, forKey: Key("b"))
            try nested.encode(2, forKey: Key("late"))
        case .escapedContainer:
            var list = encoder.unkeyedContainer()
            try list.encode(Escaping.first)
            try list.encode(Escaping.second)
        case .superEncoder:
            var container = encoder.container(keyedBy: Key.self)
            try 1.encode(to: container.superEncoder())
        case .twoSingleValues:
            var single = encoder.singleValueContainer()
            try single.encode(1)
            try single.encode(2)
        }
    }

    /// The first keeps its object's container; the second opens one at the same depth and the first writes again.
    final class Escaping: Encodable, @unchecked Sendable {
        nonisolated(unsafe) static var kept: KeyedEncodingContainer<Key>?
        static let first = Escaping(keep: true)
        static let second = Escaping(keep: false)
        let keep: Bool
        init(keep: Bool) { self.keep = keep }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(keep, forKey: Key("keep"))
            if keep {
                Self.kept = container
            } else {
                try Self.kept?.encode("stray", forKey: Key("stray"))
            }
        }
    }
}

/// A random JSON document written through every part of the `Encodable` API, in order.
private indirect enum Tree: Encodable {
    case string(String)
    case int(Int)
    case int8(Int8)
    case uint64(UInt64)
    case bool(Bool)
    case null
    case double(Double)
    case date(Date)
    case optional(Int?)
    case object([(String, Tree)])
    case nestedObject([(String, Tree)])
    case array([Tree])
    case nestedArrays([[Int]])

    static func random(depth: Int, using generator: inout SystemRandomNumberGenerator) -> Tree {
        let leafKinds = 9
        let kind = Int.random(in: 0..<(depth > 0 ? leafKinds + 4 : leafKinds), using: &generator)
        switch kind {
        case 0:
            let characters = "aZ09 \"\\/\n\t\u{1}é😀"
            return .string(String((0..<Int.random(in: 0...6, using: &generator)).map { _ in characters.randomElement(using: &generator)! }))
        case 1: return .int(Int.random(in: .min ... .max, using: &generator))
        case 2: return .int8(Int8.random(in: .min ... .max, using: &generator))
        case 3: return .uint64(UInt64.random(in: .min ... .max, using: &generator))
        case 4: return .bool(Bool.random(using: &generator))
        case 5: return .null
        case 6: return .optional(Bool.random(using: &generator) ? nil : Int.random(in: -5...5, using: &generator))
        case 7: return .double(Double(Int.random(in: -100_000...100_000, using: &generator)) / 64)
        case 8: return .date(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &generator)))
        case 9, 10:
            let count = Int.random(in: 0...5, using: &generator)
            let members = (0..<count).map { index in
                ("k\(index)-\(Int.random(in: 0...9, using: &generator))", random(depth: depth - 1, using: &generator))
            }
            return kind == 9 ? .object(members) : .nestedObject(members)
        case 11: return .array((0..<Int.random(in: 0...5, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) })
        default:
            return .nestedArrays(
                (0..<Int.random(in: 0...3, using: &generator)).map { _ in (0..<Int.random(in: 0...3, using: &generator)).map { $0 } })
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value): try value.encode(to: encoder)
        case .int(let value): try value.encode(to: encoder)
        case .int8(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .uint64(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .optional(let value): try value.encode(to: encoder)
        case .double(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .date(let value): try value.encode(to: encoder)
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            // Members with unique keys only: a repeated key is the fallback case, tested on its own.
            var seen: Set<String> = []
            for (key, value) in members where seen.insert(key).inserted {
                if case .optional(let optional) = value {
                    try container.encodeIfPresent(optional, forKey: Key(key))
                } else {
                    try container.encode(value, forKey: Key(key))
                }
            }
        case .nestedObject(let members):
            var container = encoder.container(keyedBy: Key.self)
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: Key("nested"))
            var seen: Set<String> = []
            for (key, value) in members where seen.insert(key).inserted { try nested.encode(value, forKey: Key(key)) }
            try container.encode(members.count, forKey: Key("count"))
        case .array(let items):
            var list = encoder.unkeyedContainer()
            for item in items { try list.encode(item) }
        case .nestedArrays(let rows):
            var list = encoder.unkeyedContainer()
            for row in rows {
                var nested = list.nestedUnkeyedContainer()
                for value in row { try nested.encode(value) }
            }
        }
    }
}

/// Types that swallow a failed write with `try?` and write on.
private enum Swallowing: Encodable, CaseIterable {
    case duplicateKey, url, nan

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(1, forKey: Key("a"))
        switch self {
        case .duplicateKey: try? container.encode(2, forKey: Key("a"))
        case .url: try? container.encode(URL(string: "https://example.org/x")!, forKey: Key("u"))
        case .nan: try? container.encode(Double.nan, forKey: Key("n"))
        }
        try container.encode(3, forKey: Key("b"))
    }
}
