import Foundation
import Testing

@testable import YonaDomain

/// The reader of the server's own sealed JSON against Foundation's `JSONDecoder`: the same values from every document
/// Foundation reads, and Foundation's answer (its value or its error) for every document the reader leaves to it.
@Suite struct CompactJSONDecoderTests {
    /// Both decoders' answers for `json`: equal values, or both refuse.
    static func sameReading<T: Decodable & Equatable>(
        _ type: T.Type, _ json: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let foundation = try? JSONDecoder().decode(T.self, from: Data(json))
        let compact = try? CompactJSONDecoder.decode(T.self, from: json)
        #expect(compact == foundation, "\(String(decoding: json, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    @Test func theServersOwnRecordsReadBack() throws {
        // setup: payloads and private data with every optional part set and unset, written by the server's writer
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var payload = MessagePayload(
                kind: .goalConflict, messageID: Int64.random(in: 1...(1 << 53), using: &generator), subjectUserAnonymizedID: UUID())
            if round % 2 == 0 {
                payload.goalID = UUID()
                payload.url = "https://example.org/\(round)?q=\"quoted\"\\ é😀\n"
                payload.activityStartTime = Date(timeIntervalSince1970: Double.random(in: 0...2e9, using: &generator))
                payload.translations = ["nl": "Hallo \(round)", "en": "Hello"]
                payload.deviceAnonymizedIDs = [UUID(), UUID()]
                payload.vpnConnected = round % 4 == 0
                payload.originalMessageID = -Int64(round)
            }
            let written = try CompactJSONEncoder.data(payload)
            // The server's own records are read without Foundation (the point of the reader).
            #expect(CompactJSONDecoder.readDirectly(MessagePayload.self, from: Array(written)) == payload)
            // act / check: the reader's value is Foundation's, from the writer's bytes and from Foundation's
            #expect(try CompactJSONDecoder.decode(MessagePayload.self, from: written) == JSONDecoder().decode(MessagePayload.self, from: written))
            #expect(try CompactJSONDecoder.decode(MessagePayload.self, from: JSONEncoder().encode(payload)) == payload)
        }
        let buddy = PrivateBuddy(
            id: UUID(), userID: UUID(), firstName: "Bob", lastName: "B\\\"", nickname: "b", mobileNumber: "+31612345678",
            sendingStatus: .accepted, receivingStatus: .requested, lastStatusChangeTime: Date(), buddyAnonymizedID: UUID(),
            buddyUserAnonymizedID: UUID(), deviceNames: ["phone"], deviceAnonymizedIDs: [UUID()])
        let data = UserPrivateData(
            firstName: "Ann", lastName: "A", nickname: "a", creationTime: Date(), userAnonymizedID: UUID(), devices: [],
            namedInboxSecretKey: Data((0..<32).map { UInt8($0) }), anonymousInboxSecretKey: nil, buddies: [buddy, buddy])
        let read = try #require(CompactJSONDecoder.readDirectly(UserPrivateData.self, from: Array(CompactJSONEncoder.data(data))))
        #expect(try CompactJSONEncoder.canonical(CompactJSONEncoder.data(read)) == CompactJSONEncoder.canonical(JSONEncoder().encode(data)))
    }

    @Test func randomDocumentsReadAsFoundationReadsThem() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let value = Shape.random(using: &generator)
            let json = Array(try JSONEncoder().encode(value))
            Self.sameReading(Shape.self, json)
            #expect(CompactJSONDecoder.readDirectly(Shape.self, from: json) == value)
        }
    }

    @Test func aRefusalTheTypeSwallowsLeavesTheDocumentToFoundation() throws {
        // `1.0` for an Int and a skipped element: Foundation reads both; the reader must not answer in its place.
        let json = Array(#"{"number":1.0,"strings":["a",{},"b"]}"#.utf8)
        Self.sameReading(Lossy.self, json)
        #expect(try CompactJSONDecoder.decode(Lossy.self, from: json) == Lossy(strings: ["a", "b"], number: 1))
    }

    @Test func malformedAndUnusualDocumentsGetFoundationsAnswer() throws {
        let documents = [
            #"{"int":1,"text":"a","list":[1,2],"flag":true}"#, #"{"int":1.0,"text":"a","list":[],"flag":false}"#,
            #"{"int":1e2,"text":"a","list":[],"flag":false}"#, #"{"int":01,"text":"a","list":[],"flag":false}"#,
            #"{"int":-0,"text":"\u00e9\ud83d\ude00\/","list":[],"flag":false}"#, #"{"int":1,"text":"\ud83d","list":[],"flag":false}"#,
            #"{"int":1,"text":"a","list":[1,],"flag":false}"#, #"{"int":1,"text":"a","list":[],"flag":false,}"#,
            #"{"int":1,"text":"a","list":[],"flag":false} x"#, #" {"int":1,"text":"a","list":[],"flag":false} "#,
            #"{"int":9223372036854775808,"text":"a","list":[],"flag":false}"#, #"{"int":-9223372036854775808,"text":"a","list":[],"flag":false}"#,
            #"{"int":null,"text":"a","list":[],"flag":false}"#, #"{"text":"a","list":[],"flag":false}"#,
            #"{"int":1,"text":"a","list":[null],"flag":false}"#, #"{"int":1,"text":"a","list":[],"flag":"true"}"#,
            #"{"int":1,"text":"a","list":[],"flag":false,"optional":null}"#, #"{"int":1,"text":"a","list":[],"flag":false,"optional":[1,null]}"#,
            #"{"int":1,"text":"a\tb","list":[],"flag":false}"#, #"{"int":1,"text":"a","list":[],"flag":tru}"#, "", "[", "null",
            #"{"int":1,"text":"a","list":[],"flag":false,"nested":{"int":2,"text":"b","list":[3],"flag":true}}"#,
        ]
        for document in documents { Self.sameReading(Plain.self, Array(document.utf8)) }
        Self.sameReading([Int?].self, Array("[1,null,3]".utf8))
        Self.sameReading([String: Int].self, Array(#"{"a":1,"b":2}"#.utf8))
        Self.sameReading(Date.self, Array("12.5".utf8))
        Self.sameReading(Data.self, Array(#""AAEC""#.utf8))
        Self.sameReading(Data.self, Array(#""not base64""#.utf8))
        Self.sameReading(UUID.self, Array(#""6bd5a0b5-e3b5-4ac4-8c7a-6b9c4a9c3f0e""#.utf8))
        Self.sameReading(UUID.self, Array(#""6BD5A0B5-E3B5-4AC4-8C7A-6B9C4A9C3F0E""#.utf8))
        Self.sameReading(UUID.self, Array(#""6bd5a0b5-e3b5-4ac4-8c7a""#.utf8))
        // What Foundation refuses although it scans: a number that reads as zero without being zero, a bad escape in a
        // key nobody asks for, nesting beyond 512 (which also keeps a deep document from exhausting the stack).
        Self.sameReading(Plain.self, Array(#"{"int":1,"text":"a","list":[],"flag":false,"d":1e-400}"#.utf8))
        Self.sameReading(Plain.self, Array(#"{"int":1,"text":"a","list":[],"flag":false,"\x":2}"#.utf8))
        Self.sameReading([[Int]].self, Array((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8))
        Self.sameReading([Int].self, Array((String(repeating: "[", count: 100_000)).utf8))
        // A key spelled with a combining accent is the same key to Foundation (Swift string comparison).
        Self.sameReading([String: Int].self, Array("{\"cafe\u{301}\":1}".utf8))
        Self.sameReading(Accented.self, Array("{\"cafe\u{301}\":1}".utf8))
        // An error is Foundation's own.
        #expect(throws: DecodingError.self) { try CompactJSONDecoder.decode(Plain.self, from: Array("{".utf8)) }
    }
}

private struct Accented: Codable, Equatable {
    let value: Int?
    enum CodingKeys: String, CodingKey { case value = "caf\u{e9}" }
}

/// Types that try a reading and go on when it fails.
private struct Lossy: Decodable, Equatable {
    let strings: [String]
    let number: Int?

    struct Skip: Decodable {}

    enum CodingKeys: String, CodingKey { case strings, number }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        number = try? container.decode(Int.self, forKey: .number)
        var list = try container.nestedUnkeyedContainer(forKey: .strings)
        var strings: [String] = []
        while !list.isAtEnd {
            if let string = try? list.decode(String.self) {
                strings.append(string)
            } else {
                _ = try? list.decode(Skip.self)
            }
        }
        self.strings = strings
    }

    init(strings: [String], number: Int?) {
        self.strings = strings
        self.number = number
    }
}

private struct Plain: Codable, Equatable {
    let int: Int
    let text: String
    let list: [Int]
    let flag: Bool
    var optional: [Int?]? = nil
    var nested: [Plain]? = nil
}

private struct Shape: Codable, Equatable {
    let id: UUID
    let number: Int64
    let small: Int8
    let unsigned: UInt32
    let double: Double
    let date: Date
    let text: String
    let blob: Data
    let optionalText: String?
    let list: [String?]
    let table: [String: [Int]]
    let child: [Shape]

    static func random(depth: Int = 2, using generator: inout SystemRandomNumberGenerator) -> Shape {
        let characters = Array("aZ09 \"\\/\n\t\u{1}é😀")
        func text() -> String { String((0..<Int.random(in: 0...8, using: &generator)).map { _ in characters.randomElement(using: &generator)! }) }
        return Shape(
            id: UUID(), number: Int64.random(in: .min ... .max, using: &generator), small: Int8.random(in: .min ... .max, using: &generator),
            unsigned: UInt32.random(in: .min ... .max, using: &generator),
            double: Double(bitPattern: UInt64.random(in: 0..<0x7FF0_0000_0000_0000, using: &generator)) * (Bool.random(using: &generator) ? 1 : -1),
            date: Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &generator)), text: text(),
            blob: Data((0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            optionalText: Bool.random(using: &generator) ? text() : nil,
            list: (0..<Int.random(in: 0...3, using: &generator)).map { _ in Bool.random(using: &generator) ? text() : nil },
            table: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &generator)).map { ("k\($0)\(text())", [$0, -$0]) }),
            child: depth > 0 ? (0..<Int.random(in: 0...2, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) } : [])
    }
}
