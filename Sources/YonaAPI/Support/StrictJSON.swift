import Foundation
import Vapor
import YonaDomain

/// A request body that refuses properties it does not know (api.md: `error.request.extra.property`).
package protocol StrictBody: Decodable {
    /// Properties the body may carry.
    static var allowedKeys: Set<String> { get }
    /// Properties a client may send back from a response and that are ignored (`_links`, ...).
    static var ignoredKeys: Set<String> { get }
    /// Which refused property to name first when several are sent.
    static var extraKeyPriority: [String] { get }
}

extension StrictBody {
    package static var ignoredKeys: Set<String> { [] }
    package static var extraKeyPriority: [String] { [] }
}

extension StrictBody {
    /// Decodes one JSON object strictly: invalid JSON, unknown and missing properties, each with its contract code.
    package static func decodeStrict(from data: Data) throws -> Self {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw YonaError(.invalidJSON)
        }
        let extra = object.keys.filter { !allowedKeys.contains($0) && !ignoredKeys.contains($0) }
        if !extra.isEmpty {
            // Name the one Yona names first, else the first in order, so the message is the same every time.
            let named = extraKeyPriority.first(where: extra.contains) ?? extra.sorted().first
            throw YonaError(.extraProperty, quoting: named)
        }
        // No text anyone sends has a NUL character, and PostgreSQL's text columns refuse it (a 500 otherwise).
        if containsNUL(object) { throw YonaError(.invalidJSON) }
        do {
            return try JSONDecoder().decode(Self.self, from: data)
        } catch DecodingError.keyNotFound(let key, _) {
            throw YonaError(.missingProperty, quoting: key.stringValue)
        } catch DecodingError.valueNotFound(_, let context) {
            throw YonaError(.missingProperty, quoting: context.codingPath.last?.stringValue)
        } catch let error as YonaError {
            throw error
        } catch {
            throw YonaError(.invalidJSON)
        }
    }
}

private func containsNUL(_ value: Any) -> Bool {
    switch value {
    case let text as String: text.unicodeScalars.contains("\u{0}")
    case let object as [String: Any]: object.contains { containsNUL($0.key) || containsNUL($0.value) }
    case let array as [Any]: array.contains(where: containsNUL)
    default: false
    }
}

extension Request {
    /// Decodes a JSON body strictly (`StrictBody.decodeStrict`); 415 unless the body is JSON.
    /// An empty body counts as `{}`, whatever its content type: the Android app posts some actions without one.
    package func decodeStrict<T: StrictBody>(_ type: T.Type) throws -> T {
        guard let buffer = body.data, buffer.readableBytes > 0 else { return try T.decodeStrict(from: Data("{}".utf8)) }
        guard let contentType = headers.contentType,
            contentType.type == "application", contentType.subType == "json" || contentType.subType.hasSuffix("+json")
        else {
            throw YonaError(.unsupportedMediaType)
        }
        return try T.decodeStrict(from: Data(buffer.readableBytesView))
    }
}

/// An integer property that may also arrive as a JSON string holding one (`"999"`), as Yona's apps and tests
/// send version codes and budgets and as Yona's JSON reader accepted them.
package struct LenientInt: Decodable, Sendable, Equatable {
    package let value: Int

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            value = number
        } else if let text = try? container.decode(String.self),
            let number = Int(text.trimmingCharacters(in: .whitespaces))
        {
            value = number
        } else {
            throw YonaError(.invalidJSON)
        }
    }
}

/// A boolean as JSON `true`/`false` or, as Jackson takes it and Yona's test clients send it, the string
/// `"true"`/`"false"`.
package struct LenientBool: Decodable, Sendable, Equatable {
    package let value: Bool

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            value = flag
        } else if let text = try? container.decode(String.self), let flag = Bool(text.trimmingCharacters(in: .whitespaces).lowercased()) {
            value = flag
        } else {
            throw YonaError(.invalidJSON)
        }
    }
}

/// A person's name or nickname: present (Yona's code per property when not), at most `PersonName.maxLength`
/// characters and no control characters, so it cannot carry a message or a URL into the texts and mails that name
/// the person (issue 13, attack 4).
package enum PersonName {
    package static let maxLength = 50

    package static func validated(_ value: String?, or missing: ErrorCode, property: String) throws(YonaError) -> String {
        let name = try requireText(value, or: missing, property: property)
        guard name.count <= maxLength, !name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw YonaError(.invalidName, quoting: property)
        }
        return name
    }
}
