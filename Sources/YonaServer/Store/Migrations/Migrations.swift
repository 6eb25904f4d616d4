import Fluent
import Foundation

/// Every schema change, in the order it is applied. Append only.
enum YonaMigrations {
    static let all: [any Migration] = [
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
    ]
}
