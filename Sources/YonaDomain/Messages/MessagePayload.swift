import Foundation
import YonaStore

/// What a message says, as sealed to its recipient's inbox. It carries its own id so a sealed payload
/// moved to another row is refused.
package struct MessagePayload: Codable, Sendable, Equatable {
    package enum Kind: String, Codable, Sendable {
        case goalConflict = "GoalConflictMessage"
        case buddyConnectRequest = "BuddyConnectRequestMessage"
        case buddyConnectResponse = "BuddyConnectResponseMessage"
        case buddyDisconnect = "BuddyDisconnectMessage"
        case disclosureRequest = "DisclosureRequestMessage"
        case disclosureResponse = "DisclosureResponseMessage"
        case goalChange = "GoalChangeMessage"
        case buddyDeviceChange = "BuddyDeviceChangeMessage"
        case buddyInfoChange = "BuddyInfoChangeMessage"
        case systemMessage = "SystemMessage"
        case activityComment = "ActivityCommentMessage"
        case buddyVPNConnectionStatusChange = "BuddyVpnConnectionStatusChangeMessage"
    }

    package var kind: Kind
    package var messageID: Int64
    /// The anonymized user the message is from or about (a goal conflict: whose activity it was).
    package var subjectUserAnonymizedID: UUID
    package var activityCategoryID: UUID? = nil
    package var goalID: UUID? = nil
    /// The visited URL: in the user's own goal conflict, and in a buddy's copy once disclosed.
    package var url: String? = nil
    package var activityStartTime: Date? = nil
    package var activityEndTime: Date? = nil
    package var status: String? = nil
    /// Free text a person wrote (buddy request, response, disconnect).
    package var text: String? = nil
    /// Who sent it, for messages from identities (buddy requests and responses).
    package var sender: Sender? = nil
    /// Buddy messages: the requester's buddy relation and its anonymized half.
    package var buddyID: UUID? = nil
    package var buddyAnonymizedID: UUID? = nil
    /// A buddy disconnect: `USER_REMOVED_BUDDY` or `USER_ACCOUNT_DELETED`.
    package var reason: String? = nil
    /// Goal-conflict copies and disclosure messages: the subject's own conflict message.
    package var originalMessageID: Int64? = nil
    /// Disclosure messages: the buddy's copy the disclosure is about.
    package var buddyCopyMessageID: Int64? = nil
    /// Change announcements: `GOAL_ADDED`, `GOAL_CHANGED`, `GOAL_DELETED`, `DEVICE_ADDED`, `DEVICE_RENAMED`, `DEVICE_DELETED`.
    package var change: String? = nil
    package var oldName: String? = nil
    package var newName: String? = nil
    /// A system announcement's texts by locale; rendered in the locale the message is fetched in.
    package var translations: [String: String]? = nil
    /// Buddy requests, responses and device changes: the sender's device names, all of them, as of sending.
    package var deviceNames: [String]? = nil
    /// Alongside `deviceNames`, in the same order: each device's anonymized row, where the buddy view reads the
    /// VPN flag (nil in messages sent before the flag was shown).
    package var deviceAnonymizedIDs: [UUID]? = nil
    /// A VPN status change: the device (its name as of sending) and the new state.
    package var deviceName: String? = nil
    package var vpnConnected: Bool? = nil
    /// Comments: whose day or week it is, which (`day:…`, `week:…`), and the thread in this inbox.
    package var activityOwnerAnonymizedID: UUID? = nil
    package var interval: String? = nil
    package var threadHeadMessageID: Int64? = nil
    package var repliedMessageID: Int64? = nil
    /// A direct message between identities: when it was sent. Sealed, because the named inbox's plain column holds
    /// only the day (no instant on the identity side that an anonymized row could equal); nil in older ones.
    package var sentAt: Date? = nil

    /// Whether the message only flows between buddies who accepted each other, so its plain sender column joins
    /// nothing that `buddies_anonymized` does not: requests, refusals and disconnects (which outlive or precede the
    /// relation) and announcements get none.
    package var relatesAcceptedBuddies: Bool {
        switch kind {
        case .systemMessage, .buddyDisconnect: false
        case .buddyConnectRequest, .buddyConnectResponse: status == PrivateBuddy.Status.accepted.rawValue
        default: true
        }
    }

    /// Yona refuses to delete a request nobody answered yet (`error.cannot.delete.unprocessed.message`).
    package var canBeDeleted: Bool {
        switch kind {
        case .buddyConnectRequest: status == "ACCEPTED" || status == "REJECTED"
        case .disclosureRequest: status == "DISCLOSURE_ACCEPTED" || status == "DISCLOSURE_REJECTED"
        default: true
        }
    }

    package struct Sender: Codable, Sendable, Equatable {
        package var userID: UUID
        package var firstName: String
        package var lastName: String
        package var nickname: String
        package var mobileNumber: String
        /// The sender's profile photo when the message was sent (Yona's `senderUserPhotoId`).
        package var photoID: UUID? = nil
    }
}
