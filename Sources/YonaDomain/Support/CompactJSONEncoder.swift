import Foundation

/// Writes an `Encodable` value as compact JSON straight into bytes, in one pass.
///
/// Foundation's `JSONEncoder` first builds a tree of the whole document (a dictionary per object) and then
/// serializes it: for a profile read that was a fifth of the server's CPU (docs/performance.md, "HAL documents
/// written in one pass"). This encoder writes each value as it is handed over, which works because every `encode(to:)`
/// the server renders uses its containers in order: an object's members one after the other, a nested container
/// finished before its parent goes on. The JSON is what `JSONEncoder` with `.withoutEscapingSlashes` writes, except
/// that members keep the order they were encoded in (Foundation's order comes from hashing and changes from process
/// to process). Whatever this encoder cannot write the same way answers `nil`, and the caller uses `JSONEncoder`:
/// URLs and decimals (Foundation's own writings), infinities and NaN, a container used after a later one took over, a
/// key encoded twice in one object, `superEncoder`.
package enum CompactJSONEncoder {
    /// The value's JSON, or `nil` when only Foundation's `JSONEncoder` writes it as it should be.
    package static func encode<T: Encodable>(_ value: T) -> [UInt8]? {
        let writer = JSONStreamWriter()
        do {
            try writer.encodeValue(value)
        } catch {
            return nil
        }
        return writer.failed ? nil : writer.bytes
    }

    /// The value's JSON from this encoder, or from Foundation's (without escaped slashes) where this one falls back.
    package static func data<T: Encodable>(_ value: T) throws -> Data {
        if let bytes = encode(value) { return Data(bytes) }
        return try fallback.encode(value)
    }

    /// Foundation's encoder as this one's fallback: without escaped slashes, otherwise its defaults.
    package static let fallback: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    /// `json` with every object's members sorted by key and no whitespace: two documents are the same JSON when
    /// their canonical forms are the same bytes (tests compare this encoder with Foundation's so).
    package static func canonical(_ json: Data) throws -> Data {
        try JSONSerialization.data(
            withJSONObject: JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]),
            options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    }
}

/// Why a value went back to Foundation's encoder; never leaves this file.
private struct NotStreamable: Error {}

/// The one `Encoder` of a document. `stack` holds the containers still open, innermost last: a container writes only
/// while it is open, and closes every container opened after it before it does (that is how a nested container ends:
/// the next write of its parent, or the end of the value that opened it).
private final class JSONStreamWriter: Encoder {
    struct Level {
        let closer: UInt8
        let keyed: Bool
        /// Tells this container from one opened later at the same depth after it closed.
        let serial: Int
        /// Where this object's keys begin in `keys` (duplicates are checked against them).
        let firstKey: Int
        var count = 0
    }

    /// Where a container writes: its depth in `stack` (1 for the outermost) and its level's serial.
    struct Position {
        let depth: Int
        let serial: Int
        /// The position of a container handed out after the value fell back to Foundation; every write to it throws.
        static let none = Position(depth: 0, serial: -1)
    }

    // The writer lives on one task and never hands out references into its state, so Swift's run-time exclusivity
    // checks of these class properties (a third of the encoder's time in `perf`) are switched off for them.
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var stack: [Level] = []
    /// The keys of every open object, outermost first.
    @exclusivity(unchecked) var keys: [String] = []
    @exclusivity(unchecked) var failed = false
    @exclusivity(unchecked) var serials = 0
    /// The value being encoded: the depth it writes at, whether it wrote yet, and its serial (for its single-value
    /// container).
    @exclusivity(unchecked) var slotDepth = 0
    @exclusivity(unchecked) var slotFilled = false
    @exclusivity(unchecked) var slot = 0
    @exclusivity(unchecked) var slots = 0

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init() {
        bytes.reserveCapacity(4096)
        stack.reserveCapacity(16)
        keys.reserveCapacity(64)
    }

    /// Marks the document as Foundation's and returns the error to throw: a type that swallows the error (`try?`)
    /// must not leave half a member in bytes that are then answered.
    func refuse() -> NotStreamable {
        failed = true
        return NotStreamable()
    }

    // MARK: values

    /// Encodes one value in the current position (after a key, a comma or nothing).
    func encodeValue<T: Encodable>(_ value: T) throws {
        // The commonest leaves without a trip through their `encode(to:)` (a type comparison, not a dynamic cast).
        if T.self == String.self {
            writeString(unsafeBitCast(value, to: String.self))
            return
        }
        if T.self == Int.self {
            writeInteger(unsafeBitCast(value, to: Int.self))
            return
        }
        if T.self == Bool.self {
            writeBool(unsafeBitCast(value, to: Bool.self))
            return
        }
        // Foundation's default for data is base64 text; URLs and decimals have writings of Foundation's own. A `Date`
        // encodes itself as its seconds since 2001, which is Foundation's default strategy too.
        if T.self == Data.self {
            writeString(unsafeBitCast(value, to: Data.self).base64EncodedString())
            return
        }
        if T.self == URL.self || T.self == Decimal.self { throw refuse() }
        let saved = (slotDepth, slotFilled, slot)
        slotDepth = stack.count
        slotFilled = false
        slots += 1
        slot = slots
        try value.encode(to: self)
        try close(downTo: slotDepth)
        if !slotFilled {
            // As Foundation: a value that encodes nothing is an empty object, and an error at the top.
            guard slotDepth > 0 else { throw refuse() }
            bytes.append(contentsOf: "{}".utf8)
        }
        (slotDepth, slotFilled, slot) = saved
    }

    /// Writes the closers of every container deeper than `depth`.
    func close(downTo depth: Int) throws {
        guard stack.count >= depth else { throw refuse() }
        while stack.count > depth {
            let level = stack.removeLast()
            if level.keyed { keys.removeSubrange(level.firstKey...) }
            bytes.append(level.closer)
        }
    }

    /// Makes the container at `position` the innermost open one and writes the comma before its next element.
    func prepareElement(at position: Position) throws {
        let depth = position.depth
        guard depth > 0, depth <= stack.count, stack[depth - 1].serial == position.serial else { throw refuse() }
        try close(downTo: depth)
        if stack[depth - 1].count > 0 { bytes.append(UInt8(ascii: ",")) }
        stack[depth - 1].count += 1
    }

    func prepareMember(_ key: String, at position: Position) throws {
        try prepareElement(at: position)
        let firstKey = stack[position.depth - 1].firstKey
        if keys.count > firstKey, keys[firstKey...].contains(key) { throw refuse() }
        keys.append(key)
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    func open(_ opener: UInt8, _ closer: UInt8, keyed: Bool) -> Position {
        bytes.append(opener)
        serials += 1
        stack.append(Level(closer: closer, keyed: keyed, serial: serials, firstKey: keys.count))
        return Position(depth: stack.count, serial: serials)
    }

    /// The single value a `singleValueContainer` writes: only once, and only in a value's own slot.
    func claimSlot(_ serial: Int) throws {
        guard !slotFilled, serial == slot else { throw refuse() }
        try close(downTo: slotDepth)
        slotFilled = true
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A second `container(keyedBy:)` in one `encode(to:)` goes on with the same object, as in Foundation.
        if slotFilled {
            if stack.count > slotDepth, stack[slotDepth].keyed {
                return KeyedEncodingContainer(KeyedWriter(writer: self, position: Position(depth: slotDepth + 1, serial: stack[slotDepth].serial)))
            }
            failed = true
            return KeyedEncodingContainer(KeyedWriter(writer: self, position: .none))
        }
        slotFilled = true
        return KeyedEncodingContainer(KeyedWriter(writer: self, position: open(UInt8(ascii: "{"), UInt8(ascii: "}"), keyed: true)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        guard !slotFilled else {
            failed = true
            return UnkeyedWriter(writer: self, position: .none)
        }
        slotFilled = true
        return UnkeyedWriter(writer: self, position: open(UInt8(ascii: "["), UInt8(ascii: "]"), keyed: false))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueWriter(writer: self, slot: slot) }

    // MARK: scalars

    func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    func writeInteger<T: FixedWidthInteger>(_ value: T) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // 24 bytes: room for UInt64's 20 digits
        withUnsafeMutableBytes(of: &digits) { raw in
            var index = raw.count
            repeat {
                index -= 1
                raw[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[index...]))
        }
    }

    /// A finite number as Foundation writes it: Swift's shortest round-tripping text without a trailing `.0`.
    /// Foundation refuses infinities and NaN by default; they fall back so that it says so.
    func writeFloatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ value: T) throws {
        guard value.isFinite else { throw refuse() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    func writeBool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    func writeNull() { bytes.append(contentsOf: "null".utf8) }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: JSONStreamWriter
    let position: JSONStreamWriter.Position
    var codingPath: [any CodingKey] { [] }

    func encodeNil(forKey key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        writer.writeNull()
    }

    func encode(_ value: Bool, forKey key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        writer.writeBool(value)
    }

    func encode(_ value: String, forKey key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        writer.writeString(value)
    }

    func encode(_ value: Double, forKey key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        try writer.writeFloatingPoint(value)
    }

    func encode(_ value: Float, forKey key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        try writer.writeFloatingPoint(value)
    }

    func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
    func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }

    private func integer<T: FixedWidthInteger>(_ value: T, _ key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        writer.writeInteger(value)
    }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try writer.prepareMember(key.stringValue, at: position)
        try writer.encodeValue(value)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        do {
            try writer.prepareMember(key.stringValue, at: position)
        } catch {
            // `prepare…` refused, which hands the document to Foundation.
            return KeyedEncodingContainer(KeyedWriter<NestedKey>(writer: writer, position: .none))
        }
        return KeyedEncodingContainer(
            KeyedWriter<NestedKey>(writer: writer, position: writer.open(UInt8(ascii: "{"), UInt8(ascii: "}"), keyed: true)))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        do {
            try writer.prepareMember(key.stringValue, at: position)
        } catch {
            // `prepare…` refused, which hands the document to Foundation.
            return UnkeyedWriter(writer: writer, position: .none)
        }
        return UnkeyedWriter(writer: writer, position: writer.open(UInt8(ascii: "["), UInt8(ascii: "]"), keyed: false))
    }

    func superEncoder() -> any Encoder {
        writer.failed = true
        return writer
    }

    func superEncoder(forKey key: Key) -> any Encoder {
        writer.failed = true
        return writer
    }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let writer: JSONStreamWriter
    let position: JSONStreamWriter.Position
    var codingPath: [any CodingKey] { [] }

    var count: Int {
        let depth = position.depth
        return depth > 0 && depth <= writer.stack.count && writer.stack[depth - 1].serial == position.serial ? writer.stack[depth - 1].count : 0
    }

    func encodeNil() throws {
        try writer.prepareElement(at: position)
        writer.writeNull()
    }

    func encode(_ value: Bool) throws {
        try writer.prepareElement(at: position)
        writer.writeBool(value)
    }

    func encode(_ value: String) throws {
        try writer.prepareElement(at: position)
        writer.writeString(value)
    }

    func encode(_ value: Double) throws {
        try writer.prepareElement(at: position)
        try writer.writeFloatingPoint(value)
    }

    func encode(_ value: Float) throws {
        try writer.prepareElement(at: position)
        try writer.writeFloatingPoint(value)
    }

    func encode(_ value: Int) throws { try integer(value) }
    func encode(_ value: Int8) throws { try integer(value) }
    func encode(_ value: Int16) throws { try integer(value) }
    func encode(_ value: Int32) throws { try integer(value) }
    func encode(_ value: Int64) throws { try integer(value) }
    func encode(_ value: UInt) throws { try integer(value) }
    func encode(_ value: UInt8) throws { try integer(value) }
    func encode(_ value: UInt16) throws { try integer(value) }
    func encode(_ value: UInt32) throws { try integer(value) }
    func encode(_ value: UInt64) throws { try integer(value) }

    private func integer<T: FixedWidthInteger>(_ value: T) throws {
        try writer.prepareElement(at: position)
        writer.writeInteger(value)
    }

    func encode<T: Encodable>(_ value: T) throws {
        try writer.prepareElement(at: position)
        try writer.encodeValue(value)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        do {
            try writer.prepareElement(at: position)
        } catch {
            // `prepare…` refused, which hands the document to Foundation.
            return KeyedEncodingContainer(KeyedWriter<NestedKey>(writer: writer, position: .none))
        }
        return KeyedEncodingContainer(
            KeyedWriter<NestedKey>(writer: writer, position: writer.open(UInt8(ascii: "{"), UInt8(ascii: "}"), keyed: true)))
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        do {
            try writer.prepareElement(at: position)
        } catch {
            // `prepare…` refused, which hands the document to Foundation.
            return UnkeyedWriter(writer: writer, position: .none)
        }
        return UnkeyedWriter(writer: writer, position: writer.open(UInt8(ascii: "["), UInt8(ascii: "]"), keyed: false))
    }

    func superEncoder() -> any Encoder {
        writer.failed = true
        return writer
    }
}

private struct SingleValueWriter: SingleValueEncodingContainer {
    let writer: JSONStreamWriter
    let slot: Int
    var codingPath: [any CodingKey] { [] }

    func encodeNil() throws {
        try writer.claimSlot(slot)
        writer.writeNull()
    }

    func encode(_ value: Bool) throws {
        try writer.claimSlot(slot)
        writer.writeBool(value)
    }

    func encode(_ value: String) throws {
        try writer.claimSlot(slot)
        writer.writeString(value)
    }

    func encode(_ value: Double) throws {
        try writer.claimSlot(slot)
        try writer.writeFloatingPoint(value)
    }

    func encode(_ value: Float) throws {
        try writer.claimSlot(slot)
        try writer.writeFloatingPoint(value)
    }

    func encode(_ value: Int) throws { try integer(value) }
    func encode(_ value: Int8) throws { try integer(value) }
    func encode(_ value: Int16) throws { try integer(value) }
    func encode(_ value: Int32) throws { try integer(value) }
    func encode(_ value: Int64) throws { try integer(value) }
    func encode(_ value: UInt) throws { try integer(value) }
    func encode(_ value: UInt8) throws { try integer(value) }
    func encode(_ value: UInt16) throws { try integer(value) }
    func encode(_ value: UInt32) throws { try integer(value) }
    func encode(_ value: UInt64) throws { try integer(value) }

    private func integer<T: FixedWidthInteger>(_ value: T) throws {
        try writer.claimSlot(slot)
        writer.writeInteger(value)
    }

    func encode<T: Encodable>(_ value: T) throws {
        try writer.claimSlot(slot)
        // The wrapped value writes in a slot of its own at the same depth, which may open a container.
        try writer.encodeValue(value)
    }
}
