import Foundation
import YonaDelivery
import YonaDomain

extension PushAddress {
    /// An APNs device token as the app hands it over: hex digits (Apple's tokens are 32 bytes today; up to 100 are
    /// taken), stored in lower case. `property` names the field in the error.
    package static func apns(validating raw: String, property: String) throws(YonaError) -> PushAddress {
        let token = raw.lowercased()
        guard (16...200).contains(token.count), token.count % 2 == 0, token.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw YonaError(.invalidPushAddress, quoting: property)
        }
        return .apns(token)
    }

    /// A Web Push subscription: keys that are a P-256 point and a 16-byte secret, and an https endpoint whose host
    /// resolves to public addresses only (`PublicEndpoint`; `allowPrivate` for tests).
    package static func webPush(
        validating subscription: WebPushSubscription, allowPrivate: Bool, property: String
    ) async throws(YonaError) -> PushAddress {
        guard (try? WebPushEncryption.ReceiverKeys(p256dh: subscription.keys.p256dh, auth: subscription.keys.auth)) != nil else {
            throw YonaError(.invalidPushAddress, quoting: property)
        }
        do {
            _ = try await PublicEndpoint.check(subscription.endpoint, allowPrivate: allowPrivate)
        } catch {
            throw YonaError(.invalidPushAddress, quoting: property)
        }
        return .webPush(subscription)
    }
}
