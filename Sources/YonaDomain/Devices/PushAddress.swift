import Foundation
import YonaStore

/// Where a device's pushes go: Firebase (the Yona apps' Instance ID), Apple's APNs directly (a device token), or a
/// Web Push subscription (RFC 8030; UnifiedPush distributors and browsers). A device holds at most one.
package enum PushAddress: Sendable, Equatable {
    case firebase(String)
    case apns(String)
    case webPush(WebPushSubscription)

    /// The provider family, as metrics and logs name it.
    package var kind: String {
        switch self {
        case .firebase: "fcm"
        case .apns: "apns"
        case .webPush: "webpush"
        }
    }

    /// The column of `devices_anonymized` holding this kind, and the value stored there.
    package var column: (name: String, value: String) {
        switch self {
        case .firebase(let token): ("firebase_instance_id", token)
        case .apns(let token): ("apns_token", token)
        case .webPush(let subscription): ("web_push_subscription", subscription.stored)
        }
    }

    /// What a log line or the test server's record may hold instead of the address.
    package var secret: String { column.value }

    /// One SQL expression over a device row `d` giving its address with the kind as a prefix (`PushAddress(stored:)`
    /// reads it back); NULL when it has none. A concatenation with NULL is NULL on both stores.
    package static let storedExpression =
        "COALESCE('fcm:' || d.firebase_instance_id, 'apns:' || d.apns_token, 'webpush:' || d.web_push_subscription)"

    /// The column's text of a value `storedExpression` gave: what follows the kind's prefix.
    package static func columnValue(ofStored stored: String) -> String {
        stored.firstIndex(of: ":").map { String(stored[stored.index(after: $0)...]) } ?? stored
    }

    package init?(stored: String) {
        if stored.hasPrefix("fcm:") {
            self = .firebase(String(stored.dropFirst(4)))
        } else if stored.hasPrefix("apns:") {
            self = .apns(String(stored.dropFirst(5)))
        } else if stored.hasPrefix("webpush:"), let subscription = WebPushSubscription(stored: String(stored.dropFirst(8))) {
            self = .webPush(subscription)
        } else {
            return nil
        }
    }

    /// The device row's columns for this address: it set, the other two cleared.
    package func apply(to device: DeviceAnonymized, at now: Date) {
        device.firebaseInstanceID = nil
        device.apnsToken = nil
        device.webPushSubscription = nil
        switch self {
        case .firebase(let token): device.firebaseInstanceID = token
        case .apns(let token): device.apnsToken = token
        case .webPush(let subscription): device.webPushSubscription = subscription.stored
        }
        device.firebaseInstanceIDUpdatedAt = now
    }
}

/// A browser's or distributor's `PushSubscription`: where to post (`endpoint`) and the keys to encrypt for
/// (RFC 8291: `p256dh` the receiver's P-256 public key, `auth` its 16-byte secret, both base64url).
package struct WebPushSubscription: Codable, Sendable, Equatable {
    package struct Keys: Codable, Sendable, Equatable {
        package let p256dh: String
        package let auth: String

        package init(p256dh: String, auth: String) {
            self.p256dh = p256dh
            self.auth = auth
        }
    }
    package let endpoint: String
    package let keys: Keys

    package init(endpoint: String, keys: Keys) {
        self.endpoint = endpoint
        self.keys = keys
    }

    /// The stored form: compact JSON with sorted keys, so one subscription is always the same text.
    package var stored: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The column's text of a value `storedExpression` gave: what follows the kind's prefix.
    package static func columnValue(ofStored stored: String) -> String {
        stored.firstIndex(of: ":").map { String(stored[stored.index(after: $0)...]) } ?? stored
    }

    package init?(stored: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(stored.utf8)) else { return nil }
        self = decoded
    }
}
