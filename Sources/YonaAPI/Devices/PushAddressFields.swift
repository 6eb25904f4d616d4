import Foundation
import YonaDomain
import YonaPush

/// The push address fields of a device body: Yona's Instance ID, or (an extension of the Yona format) an APNs token
/// or a Web Push subscription. At most one may be given; the device then holds that one and no other.
package struct PushAddressFields {
    package let firebaseInstanceId: String?
    package let apnsToken: String?
    package let webPushSubscription: WebPushSubscription?
    /// The properties' names in this body (`deviceApnsToken` in a user's).
    package var names = (firebase: "firebaseInstanceId", apns: "apnsToken", webPush: "webPushSubscription")

    package func resolve(allowPrivateEndpoints: Bool) async throws -> PushAddress? {
        let given = [
            firebaseInstanceId != nil ? names.firebase : nil, apnsToken != nil ? names.apns : nil, webPushSubscription != nil ? names.webPush : nil,
        ]
        .compactMap { $0 }
        guard given.count <= 1 else { throw YonaError(.invalidPushAddress, quoting: given[1]) }
        if let firebaseInstanceId { return .firebase(try FirebaseInstanceID.validated(firebaseInstanceId)) }
        if let apnsToken { return try PushAddress.apns(validating: apnsToken, property: names.apns) }
        if let webPushSubscription {
            return try await PushAddress.webPush(validating: webPushSubscription, allowPrivate: allowPrivateEndpoints, property: names.webPush)
        }
        return nil
    }
}
