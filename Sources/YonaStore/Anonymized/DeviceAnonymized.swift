import FluentKit
import Foundation

/// The anonymized device table: what a push or the classifier needs about a device, nothing about whose it is.
package final class DeviceAnonymized: Model, @unchecked Sendable {
    package static let schema = "devices_anonymized"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    @Field(key: "device_index") package var deviceIndex: Int
    @Field(key: "operating_system") package var operatingSystem: String
    @OptionalField(key: "app_version") package var appVersion: String?
    @OptionalField(key: "app_version_code") package var appVersionCode: Int?
    @OptionalField(key: "firebase_instance_id") package var firebaseInstanceID: String?
    /// A direct APNs device token (hex); set only while the other two push addresses are not.
    @OptionalField(key: "apns_token") package var apnsToken: String?
    /// A Web Push subscription as JSON (`{"endpoint","keys":{"p256dh","auth"}}`); set only while the others are not.
    @OptionalField(key: "web_push_subscription") package var webPushSubscription: String?
    /// A day (`yyyy-MM-dd`), not an instant: coarse on purpose.
    @OptionalField(key: "app_last_opened_date") package var appLastOpenedDate: String?
    /// The day of the latest activity reported for the device (Yona's `lastMonitoredActivityDate`).
    @OptionalField(key: "last_monitored_activity_date") package var lastMonitoredActivityDate: String?
    @OptionalField(key: "locale") package var locale: String?
    /// Whether the app last reported its VPN connected (Yona's `vpnConnected`).
    @Field(key: "vpn_connected") package var vpnConnected: Bool
    /// The device's own switch (an extension of the Yona format): no pushes while false.
    @Field(key: "notifications_enabled") package var notificationsEnabled: Bool
    /// When the app last sent its push address (whichever of the three); addresses not refreshed for long are pruned.
    @OptionalField(key: "firebase_instance_id_updated_at") package var firebaseInstanceIDUpdatedAt: Date?

    // relationships
    @Parent(key: "user_anonymized_id") package var userAnonymized: UserAnonymized

    package init() {}

    package init(
        id: UUID, userAnonymizedID: UUID, deviceIndex: Int, operatingSystem: String,
        appVersion: String?, appVersionCode: Int?, firebaseInstanceID: String?
    ) {
        self.id = id
        self.$userAnonymized.id = userAnonymizedID
        self.deviceIndex = deviceIndex
        self.operatingSystem = operatingSystem
        self.appVersion = appVersion
        self.appVersionCode = appVersionCode
        self.firebaseInstanceID = firebaseInstanceID
        self.notificationsEnabled = true
        self.vpnConnected = false
        self.firebaseInstanceIDUpdatedAt = firebaseInstanceID == nil ? nil : Date()
    }
}
