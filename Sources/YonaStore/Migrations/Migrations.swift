import FluentKit
import Foundation

/// Every schema change, in the order it is applied. Append only.
package enum YonaMigrations {
    /// The migrations of a test server (`production` false) or any other.
    package static func all(production: Bool) -> [any Migration] {
        common + [SeedProductionActivityCategories(production: production)]
    }

    /// How many there are.
    package static var count: Int { all(production: false).count }

    private static let common: [any Migration] = [
        CreateUsers(),
        CreateUsersAnonymized(),
        CreateDevicesAnonymized(),
        AddPrivateDataVersionToUsers(),
        AddLocaleToDevicesAnonymized(),
        CreateNewDeviceRequests(),
        CreateRateLimitCounters(),
        CreateActivityCategories(),
        SeedDefaultActivityCategories(),
        CreateGoals(),
        AddInboxPublicKeys(),
        CreateMessages(),
        CreateActivities(),
        CreatePushOutbox(),
        CreateProcessedAnalyzerEvents(),
        CreateBuddiesAnonymized(),
        CreateNamedMessages(),
        AddClaimToPushOutbox(),
        CreatePushDeliveries(),
        AddNotificationSettingsToDevicesAnonymized(),
        AddPushOutboxIndexes(),
        AddCreatedOnBuddyRequestToUsers(),
        CreateSystemAnnouncements(),
        AddOverwriteToUsers(),
        AddInvitedOnToUsers(),
        AdoptYonaActivityCategories(),
        CreateGoalHistoryItems(),
        AddMessageRelations(),
        AddInvitationPasswordToUsers(),
        AddActivityIndexes(),
        AddActivityComments(),
        CreateTextOutbox(),
        AddPinResetToUsers(),
        AddLastMonitoredActivityDate(),
        AddVPNConnectedToDevicesAnonymized(),
        CreateUserPhotos(),
        CreateVPNAccountOutbox(),
        AddInboxIndex(),
        ReshapePushOutboxForTheDrain(),
        AddSnapshotTakenToSystemAnnouncements(),
        AddAppToActivities(),
        KeepActivitiesOfRemovedDevices(),
        AddNamedInboxIndex(),
        AddAnnouncementToInboxIndex(),
        StoreMessagesInWritingOrder(),
        CountInboxesWithoutAHotRow(),
        LeaseTextsAsTheOtherOutboxes(),
        AddPushAddressesToDevicesAnonymized(),
        CoalescePushesPerDevice(),
        CreateWhiteListedNumbers(),
        CreateConsoleSessions(),
        CreateDeliveryMinutes(),
    ]
}
