import Foundation
import NIOCore
import YonaDomain

/// The FCM HTTP v1 body of a content-free, data-only push (push.md "The payload"): the message id and the
/// user-less message URL, nothing else. `Schemas/push-message.schema.json` describes it.
package struct PushMessage: Codable, Sendable, Equatable {
    package struct Body: Codable, Sendable, Equatable {
        package let token: String
        package let data: [String: String]
        package let android: Android
        package let apns: APNS
    }
    package struct Android: Codable, Sendable, Equatable {
        package let priority: String
        package let ttl: String
        // swift-format-ignore: AlwaysUseLowerCamelCase
        package let collapse_key: String // FCM's field name
    }
    package struct APNS: Codable, Sendable, Equatable {
        package struct Payload: Codable, Sendable, Equatable {
            package struct APS: Codable, Sendable, Equatable {
                package let contentAvailable: Int
                package enum CodingKeys: String, CodingKey { case contentAvailable = "content-available" }
            }
            package let aps: APS
        }
        package let headers: [String: String]
        package let payload: Payload
    }

    package let message: Body

    /// Firebase's maximum time to live.
    package static let maxTTLSeconds = 2_419_200

    package static func make(token: String, messageID: Int64, publicBaseURL: String, ttlSeconds: Int = 86_400) -> PushMessage {
        make(token: token, push: OutgoingPush(address: .firebase(token), messageID: messageID, publicBaseURL: publicBaseURL), ttlSeconds: ttlSeconds)
    }

    package static func make(token: String, push: OutgoingPush, ttlSeconds: Int = 86_400) -> PushMessage {
        let key = push.collapseKey
        return PushMessage(
            message: Body(
                token: token,
                data: push.data,
                android: Android(priority: "high", ttl: "\(min(ttlSeconds, maxTTLSeconds))s", collapse_key: key),
                apns: APNS(
                    headers: ["apns-priority": "5", "apns-push-type": "background", "apns-collapse-id": key],
                    payload: .init(aps: .init(contentAvailable: 1)))))
    }

    package var data: [String: String] { message.data }

    /// The request body: the same JSON value as `JSONEncoder` writes for this message (maps' keys sorted), written
    /// straight into a buffer. The drain encodes one body per push, and the generic encoder was about 9% of its
    /// CPU (docs/performance.md, push delivery); `PushMessageTests` holds the two encodings equal.
    package func body(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var out = allocator.buffer(capacity: 384 + message.token.utf8.count)
        out.writeStaticString(#"{"message":{"token":"#)
        Self.writeJSONString(message.token, to: &out)
        out.writeStaticString(#","data":"#)
        Self.writeJSONObject(message.data, to: &out)
        out.writeStaticString(#","android":{"priority":"#)
        Self.writeJSONString(message.android.priority, to: &out)
        out.writeStaticString(#","ttl":"#)
        Self.writeJSONString(message.android.ttl, to: &out)
        out.writeStaticString(#","collapse_key":"#)
        Self.writeJSONString(message.android.collapse_key, to: &out)
        out.writeStaticString(#"},"apns":{"headers":"#)
        Self.writeJSONObject(message.apns.headers, to: &out)
        out.writeStaticString(#","payload":{"aps":{"content-available":"#)
        out.writeString(String(message.apns.payload.aps.contentAvailable))
        out.writeStaticString("}}}}}")
        return out
    }

    /// `{` the map's members `}` (`writeJSONMembers`).
    package static func writeJSONObject(_ map: [String: String], to out: inout ByteBuffer) {
        out.writeStaticString("{")
        writeJSONMembers(map, to: &out)
        out.writeStaticString("}")
    }

    /// The map's members, keys sorted, comma-separated, without braces: FCM's data and headers objects, and the two
    /// data keys APNs and Web Push carry beside or instead of their own.
    package static func writeJSONMembers(_ map: [String: String], to out: inout ByteBuffer) {
        for (index, key) in map.keys.sorted().enumerated() {
            if index > 0 { out.writeStaticString(",") }
            writeJSONString(key, to: &out)
            out.writeStaticString(":")
            writeJSONString(map[key]!, to: &out)
        }
    }

    /// A JSON string literal (RFC 8259): quote, backslash and control characters escaped, everything else as UTF-8.
    package static func writeJSONString(_ text: String, to out: inout ByteBuffer) {
        out.writeStaticString("\"")
        // Cut only at the ASCII bytes that need escaping, by UTF-8 index (a String slice would round to characters).
        let utf8 = text.utf8
        var pending = utf8.startIndex
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                out.writeBytes(utf8[pending..<index])
                switch byte {
                case UInt8(ascii: "\""): out.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): out.writeStaticString("\\\\")
                case 0x0A: out.writeStaticString("\\n")
                case 0x0D: out.writeStaticString("\\r")
                case 0x09: out.writeStaticString("\\t")
                default:
                    out.writeStaticString("\\u00")
                    out.writeInteger(hexDigits[Int(byte >> 4)])
                    out.writeInteger(hexDigits[Int(byte & 0x0F)])
                }
                pending = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        out.writeBytes(utf8[pending..<utf8.endIndex])
        out.writeStaticString("\"")
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
