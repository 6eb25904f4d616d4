import Foundation

/// What a message says, as sealed to its recipient's inbox. It carries its own id so a sealed payload
/// moved to another row is refused.
struct MessagePayload: Codable, Sendable, Equatable {
    enum Kind: String, Codable, Sendable {
        case goalConflict = "GoalConflictMessage"
    }

    var kind: Kind
    var messageID: Int64
    /// The anonymized user the message is about (a goal conflict: whose activity it was).
    var subjectUserAnonymizedID: UUID
    var activityCategoryID: UUID?
    var goalID: UUID?
    /// The visited URL; only in the user's own copy of a goal conflict.
    var url: String?
    var activityStartTime: Date?
    var activityEndTime: Date?
    var status: String?
}
