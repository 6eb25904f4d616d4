import Foundation

/// The FCM HTTP v1 body of a content-free, data-only push (push.md "The payload"): the message id and the
/// user-less message URL, nothing else. `Schemas/push-message.schema.json` describes it.
struct PushMessage: Codable, Sendable, Equatable {
    struct Body: Codable, Sendable, Equatable {
        let token: String
        let data: [String: String]
        let android: Android
        let apns: APNS
    }
    struct Android: Codable, Sendable, Equatable {
        let priority: String
        let ttl: String
        // swift-format-ignore: AlwaysUseLowerCamelCase
        let collapse_key: String // FCM's field name
    }
    struct APNS: Codable, Sendable, Equatable {
        struct Payload: Codable, Sendable, Equatable {
            struct APS: Codable, Sendable, Equatable {
                let contentAvailable: Int
                enum CodingKeys: String, CodingKey { case contentAvailable = "content-available" }
            }
            let aps: APS
        }
        let headers: [String: String]
        let payload: Payload
    }

    let message: Body

    /// Firebase's maximum time to live.
    static let maxTTLSeconds = 2_419_200

    static func make(token: String, messageID: Int64, publicBaseURL: String, ttlSeconds: Int = 86_400) -> PushMessage {
        let key = "m\(messageID)"
        return PushMessage(
            message: Body(
                token: token,
                data: ["messageId": String(messageID), "url": "\(publicBaseURL)/messages/\(messageID)"],
                android: Android(priority: "high", ttl: "\(min(ttlSeconds, maxTTLSeconds))s", collapse_key: key),
                apns: APNS(
                    headers: ["apns-priority": "5", "apns-push-type": "background", "apns-collapse-id": key],
                    payload: .init(aps: .init(contentAvailable: 1)))))
    }

    var data: [String: String] { message.data }
}
