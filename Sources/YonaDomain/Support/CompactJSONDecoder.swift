import Foundation
import YonaCrypto

/// Reads the JSON the server sealed itself (message payloads, private data, outbox rows) into `Decodable` values
/// without Foundation's `JSONDecoder`: 15% of an inbox page's CPU was that decoder opening 20 payloads and the
/// reader's private data (docs/performance.md). The document is scanned once into a flat list of nodes; containers
/// find members by comparing key bytes, starting after the member read last (types decode their keys in the order
/// they encoded them). Values are read as Foundation's defaults read them (a `Date` from its seconds since 2001, `Data`
/// from base64, a `UUID` from its text). Anything else, and any document this reader does not take (malformed JSON, a
/// number an integer type cannot hold exactly, a type with a strategy of Foundation's own), goes to `JSONDecoder`,
/// whose answer or error is then the answer.
package enum CompactJSONDecoder {
    package static func decode<T: Decodable>(_ type: T.Type, from json: some Collection<UInt8>) throws -> T {
        let bytes = Array(json)
        if let value = readDirectly(T.self, from: bytes) { return value }
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    }

    /// This reader's value alone, `nil` where it leaves the document to Foundation.
    package static func readDirectly<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
        try? JSONNodeReader(bytes).decodeRoot(T.self)
    }
}

/// A document this reader leaves to Foundation; never leaves this file.
private struct NotReadable: Error {}

/// One JSON value of the document: its kind, where its text is, and for a container the index after its last node.
private struct JSONNode {
    /// `escapedString`: a string with escapes or bytes beyond ASCII, read (and compared as a key) as a Swift string.
    enum Kind: UInt8 { case object, array, string, escapedString, number, integer, bool, null }
    let kind: Kind
    /// For strings the text between the quotes; for numbers their text; for `true`/`false` the first byte.
    let start: Int
    let end: Int
    /// For containers: the index of the first node after the container (its children are in between).
    var after: Int
}

private final class JSONNodeReader {
    let bytes: [UInt8]
    @exclusivity(unchecked) var nodes: [JSONNode] = []
    /// Set by every refusal, even one a type swallows with `try?`: Foundation might have read that value, so the
    /// whole document is then Foundation's.
    @exclusivity(unchecked) var failed = false
    /// Containers open while scanning; Foundation stops at 512.
    @exclusivity(unchecked) var depth = 0

    func refuse() -> NotReadable {
        failed = true
        return NotReadable()
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func decodeRoot<T: Decodable>(_ type: T.Type) throws -> T {
        nodes.reserveCapacity(bytes.count / 8)
        var position = try scanValue(at: skipWhitespace(0))
        position = skipWhitespace(position)
        guard position == bytes.count else { throw refuse() }
        let value = try decode(T.self, node: 0)
        guard !failed else { throw NotReadable() }
        return value
    }

    // MARK: scanning

    func skipWhitespace(_ start: Int) -> Int {
        var position = start
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return position
            }
        }
        return position
    }

    /// Scans the value at `start` (no whitespace before it), appending its nodes; returns the position after it.
    func scanValue(at start: Int) throws -> Int {
        guard start < bytes.count else { throw refuse() }
        switch bytes[start] {
        case UInt8(ascii: "{"): return try scanContainer(at: start, kind: .object, closer: UInt8(ascii: "}"))
        case UInt8(ascii: "["): return try scanContainer(at: start, kind: .array, closer: UInt8(ascii: "]"))
        case UInt8(ascii: "\""): return try scanString(at: start)
        case UInt8(ascii: "t"): return try scanLiteral("true", at: start, kind: .bool)
        case UInt8(ascii: "f"): return try scanLiteral("false", at: start, kind: .bool)
        case UInt8(ascii: "n"): return try scanLiteral("null", at: start, kind: .null)
        default: return try scanNumber(at: start)
        }
    }

    func scanContainer(at start: Int, kind: JSONNode.Kind, closer: UInt8) throws -> Int {
        depth += 1
        defer { depth -= 1 }
        guard depth <= 512 else { throw refuse() }
        let index = nodes.count
        nodes.append(JSONNode(kind: kind, start: start, end: start, after: 0))
        var position = skipWhitespace(start + 1)
        if position < bytes.count, bytes[position] == closer {
            nodes[index].after = nodes.count
            return position + 1
        }
        while true {
            if kind == .object {
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw refuse() }
                position = skipWhitespace(try scanString(at: position))
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw refuse() }
                position = skipWhitespace(position + 1)
            }
            position = skipWhitespace(try scanValue(at: position))
            guard position < bytes.count else { throw refuse() }
            if bytes[position] == UInt8(ascii: ",") {
                position = skipWhitespace(position + 1)
                continue
            }
            guard bytes[position] == closer else { throw refuse() }
            nodes[index].after = nodes.count
            return position + 1
        }
    }

    func scanString(at start: Int) throws -> Int {
        var position = start + 1
        var escaped = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                nodes.append(JSONNode(kind: escaped ? .escapedString : .string, start: start + 1, end: position, after: 0))
                return position + 1
            }
            guard byte >= 0x20 else { throw refuse() }
            if byte >= 0x80 {
                // Not ASCII: read and compared as a Swift string (canonical equivalence, as Foundation compares keys).
                escaped = true
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
                guard position + 1 < bytes.count else { throw refuse() }
                switch bytes[position + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                    UInt8(ascii: "r"), UInt8(ascii: "t"), UInt8(ascii: "u"):
                    break
                default: throw refuse()
                }
                position += 1
            }
            position += 1
        }
        throw refuse()
    }

    func scanLiteral(_ literal: StaticString, at start: Int, kind: JSONNode.Kind) throws -> Int {
        let count = literal.utf8CodeUnitCount
        guard start + count <= bytes.count else { throw refuse() }
        for offset in 0..<count where bytes[start + offset] != literal.utf8Start[offset] { throw refuse() }
        nodes.append(JSONNode(kind: kind, start: start, end: start + count, after: 0))
        return start + count
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as RFC 8259 has it.
    func scanNumber(at start: Int) throws -> Int {
        var position = start
        func digits() -> Int {
            let first = position
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") { position += 1 }
            return position - first
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw refuse() }
        var integer = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw refuse() }
            integer = false
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw refuse() }
            integer = false
        }
        nodes.append(JSONNode(kind: integer ? .integer : .number, start: start, end: position, after: 0))
        return position
    }

    // MARK: values

    /// The index of the node after `index`'s whole value.
    func after(_ index: Int) -> Int {
        switch nodes[index].kind {
        case .object, .array: nodes[index].after
        default: index + 1
        }
    }

    func string(_ index: Int) throws -> String {
        let node = nodes[index]
        switch node.kind {
        case .string:
            guard let text = String(validating: bytes[node.start..<node.end], as: UTF8.self) else { throw refuse() }
            return text
        case .escapedString: return try unescape(node)
        default: throw refuse()
        }
    }

    func unescape(_ node: JSONNode) throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity(node.end - node.start)
        var position = node.start
        func hex4() throws -> UInt32 {
            guard position + 4 <= node.end else { throw refuse() }
            var value: UInt32 = 0
            for offset in 0..<4 {
                guard let digit = Hex.value(bytes[position + offset]) else { throw refuse() }
                value = value << 4 | UInt32(digit)
            }
            position += 4
            return value
        }
        while position < node.end {
            let byte = bytes[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard position < node.end else { throw refuse() }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard position + 2 <= node.end, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                        throw refuse()
                    }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw refuse() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw refuse() }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: throw refuse()
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw refuse() }
        return text
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, _ index: Int) throws -> T {
        let node = nodes[index]
        guard node.kind == .integer else { throw refuse() }
        var position = node.start
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value: T = 0
        while position < node.end {
            let digit = T(bytes[position] - UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { throw refuse() }
            value = next
            position += 1
        }
        return value
    }

    func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, _ index: Int) throws -> T {
        let node = nodes[index]
        guard node.kind == .integer || node.kind == .number,
            let text = String(validating: bytes[node.start..<node.end], as: UTF8.self), let value = T(text), value.isFinite
        else { throw refuse() }
        // Foundation refuses a number that is not zero but reads as zero (`1e-400`).
        if value == 0,
            text.utf8.prefix(while: { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }).contains(where: {
                $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9")
            })
        {
            throw refuse()
        }
        return value
    }

    func bool(_ index: Int) throws -> Bool {
        let node = nodes[index]
        guard node.kind == .bool else { throw refuse() }
        return bytes[node.start] == UInt8(ascii: "t")
    }

    func decode<T: Decodable>(_ type: T.Type, node index: Int) throws -> T {
        // Foundation's defaults for these, read directly; URLs and decimals have readings of Foundation's own.
        if T.self == String.self { return unsafeBitCast(try string(index), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(Int.self, index), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try integer(Int64.self, index), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(index), to: T.self) }
        if T.self == UUID.self {
            let text = try string(index)
            guard let id = UUID(text: text) ?? UUID(uuidString: text) else { throw refuse() }
            return unsafeBitCast(id, to: T.self)
        }
        if T.self == Date.self {
            return unsafeBitCast(Date(timeIntervalSinceReferenceDate: try floatingPoint(Double.self, index)), to: T.self)
        }
        if T.self == Data.self {
            guard let data = Data(base64Encoded: try string(index)) else { throw refuse() }
            return unsafeBitCast(data, to: T.self)
        }
        if T.self == URL.self || T.self == Decimal.self { throw refuse() }
        return try T(from: NodeDecoder(reader: self, index: index))
    }
}

/// The `Decoder` of one node.
private struct NodeDecoder: Decoder {
    let reader: JSONNodeReader
    let index: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard reader.nodes[index].kind == .object else { throw reader.refuse() }
        return KeyedDecodingContainer(KeyedReader<Key>(reader: reader, object: index))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard reader.nodes[index].kind == .array else { throw reader.refuse() }
        return UnkeyedReader(reader: reader, array: index)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueReader(reader: reader, index: index) }
}

private final class KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: JSONNodeReader
    let object: Int
    /// The key node of the member found last. Swift's `decodeIfPresent` asks `contains`, then `decodeNil`, then
    /// `decode` for one key: the later asks find it here; a search for another key starts after it.
    var last: Int?
    var codingPath: [any CodingKey] { [] }

    init(reader: JSONNodeReader, object: Int) {
        self.reader = reader
        self.object = object
    }

    var allKeys: [Key] {
        var keys: [Key] = []
        var member = object + 1
        while member < reader.nodes[object].after {
            if let name = try? reader.string(member), let key = Key(stringValue: name) { keys.append(key) }
            member = reader.after(member + 1)
        }
        return keys
    }

    /// The value node of `key`, or nil.
    func value(_ key: Key) throws -> Int? {
        let end = reader.nodes[object].after
        guard end > object + 1 else { return nil }
        var name = key.stringValue
        return try name.withUTF8 { wanted -> Int? in
            func isKey(_ member: Int) throws -> Bool {
                let node = reader.nodes[member]
                guard node.kind == .string else { return try reader.string(member) == key.stringValue }
                return node.end - node.start == wanted.count
                    && reader.bytes.withUnsafeBufferPointer { all in
                        memcmp(all.baseAddress! + node.start, wanted.baseAddress!, wanted.count) == 0
                    }
            }
            if let last, try isKey(last) { return last + 1 }
            // From the member after the last one found to the end, then from the start.
            let afterLast = last.map { reader.after($0 + 1) } ?? end
            var member = afterLast < end ? afterLast : object + 1
            let first = member
            repeat {
                if try isKey(member) {
                    last = member
                    return member + 1
                }
                let next = reader.after(member + 1)
                member = next < end ? next : object + 1
            } while member != first
            return nil
        }
    }

    func required(_ key: Key) throws -> Int {
        guard let index = try value(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "No value for \(key.stringValue)"))
        }
        return index
    }

    func contains(_ key: Key) -> Bool { (try? value(key)) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { reader.nodes[try required(key)].kind == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader.bool(try nonNull(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader.string(try nonNull(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader.floatingPoint(Double.self, try nonNull(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader.floatingPoint(Float.self, try nonNull(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader.integer(Int.self, try nonNull(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader.integer(Int8.self, try nonNull(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader.integer(Int16.self, try nonNull(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader.integer(Int32.self, try nonNull(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader.integer(Int64.self, try nonNull(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader.integer(UInt.self, try nonNull(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader.integer(UInt8.self, try nonNull(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader.integer(UInt16.self, try nonNull(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader.integer(UInt32.self, try nonNull(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader.integer(UInt64.self, try nonNull(key)) }

    /// Any other type reads itself, `null` included (an `Optional` reads `null` as `nil`, as in Foundation).
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try reader.decode(T.self, node: try required(key)) }

    /// As Foundation: `null` where a value is required is `valueNotFound`.
    private func nonNull(_ key: Key) throws -> Int {
        let index = try required(key)
        guard reader.nodes[index].kind != .null else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [key], debugDescription: "null for \(key.stringValue)"))
        }
        return index
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try NodeDecoder(reader: reader, index: try required(key)).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try NodeDecoder(reader: reader, index: try required(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw reader.refuse() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw reader.refuse() }
}

private struct UnkeyedReader: UnkeyedDecodingContainer {
    let reader: JSONNodeReader
    let end: Int
    var next: Int
    var currentIndex = 0
    let count: Int?
    var codingPath: [any CodingKey] { [] }
    var isAtEnd: Bool { next >= end }

    init(reader: JSONNodeReader, array: Int) {
        self.reader = reader
        end = reader.nodes[array].after
        next = array + 1
        var count = 0
        var child = next
        while child < end {
            count += 1
            child = reader.after(child)
        }
        self.count = count
    }

    /// Reads the next element with `read` and moves past it only once it was read, as Foundation does (a type may
    /// try another reading of the same element); `null` only where `nullable` (a type that reads itself).
    private mutating func take<Value>(nullable: Bool = false, _ read: (JSONNodeReader, Int) throws -> Value) throws -> Value {
        guard next < end else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "Unkeyed container is at its end"))
        }
        let index = next
        guard nullable || reader.nodes[index].kind != .null else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "null in an array"))
        }
        let value = try read(reader, index)
        next = reader.after(index)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard next < end else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "Unkeyed container is at its end"))
        }
        guard reader.nodes[next].kind == .null else { return false }
        next += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try take { try $0.bool($1) } }
    mutating func decode(_ type: String.Type) throws -> String { try take { try $0.string($1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try take { try $0.floatingPoint(Double.self, $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try take { try $0.floatingPoint(Float.self, $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try take { try $0.integer(Int.self, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try take { try $0.integer(Int8.self, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try take { try $0.integer(Int16.self, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try take { try $0.integer(Int32.self, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try take { try $0.integer(Int64.self, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try take { try $0.integer(UInt.self, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try take { try $0.integer(UInt8.self, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try take { try $0.integer(UInt16.self, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try take { try $0.integer(UInt32.self, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try take { try $0.integer(UInt64.self, $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try take(nullable: true) { try $0.decode(T.self, node: $1) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try take { try NodeDecoder(reader: $0, index: $1).container(keyedBy: NestedKey.self) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try take { try NodeDecoder(reader: $0, index: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { throw reader.refuse() }
}

private struct SingleValueReader: SingleValueDecodingContainer {
    let reader: JSONNodeReader
    let index: Int
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { reader.nodes[index].kind == .null }

    private func nonNull() throws -> Int {
        guard reader.nodes[index].kind != .null else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "null for a value"))
        }
        return index
    }

    func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(try nonNull()) }
    func decode(_ type: String.Type) throws -> String { try reader.string(try nonNull()) }
    func decode(_ type: Double.Type) throws -> Double { try reader.floatingPoint(Double.self, try nonNull()) }
    func decode(_ type: Float.Type) throws -> Float { try reader.floatingPoint(Float.self, try nonNull()) }
    func decode(_ type: Int.Type) throws -> Int { try reader.integer(Int.self, try nonNull()) }
    func decode(_ type: Int8.Type) throws -> Int8 { try reader.integer(Int8.self, try nonNull()) }
    func decode(_ type: Int16.Type) throws -> Int16 { try reader.integer(Int16.self, try nonNull()) }
    func decode(_ type: Int32.Type) throws -> Int32 { try reader.integer(Int32.self, try nonNull()) }
    func decode(_ type: Int64.Type) throws -> Int64 { try reader.integer(Int64.self, try nonNull()) }
    func decode(_ type: UInt.Type) throws -> UInt { try reader.integer(UInt.self, try nonNull()) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(UInt8.self, try nonNull()) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.integer(UInt16.self, try nonNull()) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.integer(UInt32.self, try nonNull()) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(UInt64.self, try nonNull()) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try reader.decode(T.self, node: index) }
}
