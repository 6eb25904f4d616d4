import Fluent
import Foundation

/// A goal of an anonymized user: a budget (0 minutes is a no-go goal, a danger zone) or time zones.
final class Goal: Model, @unchecked Sendable {
    static let schema = "goals"
    /// Yona dates every mandatory goal 2017-01-01T12:00Z. It also keeps the row from telling when its user joined
    /// (which could join the two sides of the store).
    static let mandatoryCreationTime = Date(timeIntervalSince1970: 1_483_272_000)

    // managed
    @ID(key: .id) var id: UUID?
    /// When the goal started to count; an activity only counts for goals that existed when it happened.
    @Field(key: "creation_time") var creationTime: Date

    // data
    @Field(key: "kind") var kind: String
    @OptionalField(key: "max_duration_minutes") var maxDurationMinutes: Int?
    @Field(key: "zones") var zones: [String]

    // relationships
    @Parent(key: "user_anonymized_id") var userAnonymized: UserAnonymized
    @Parent(key: "activity_category_id") var activityCategory: ActivityCategory

    /// Whether the goal's category is a mandatory no-go one, when the goal was read with that flag (not stored here:
    /// a plain property, which Fluent leaves alone). Otherwise the eager-loaded category tells.
    var onMandatoryCategory: Bool?

    /// Whether the goal's category is a mandatory no-go one (the goal then cannot be changed or removed).
    var isOnMandatoryCategory: Bool { onMandatoryCategory ?? activityCategory.mandatoryNoGo }

    init() {}

    init(
        id: UUID, userAnonymizedID: UUID, activityCategoryID: UUID, kind: String, maxDurationMinutes: Int?,
        zones: [String], creationTime: Date
    ) {
        self.id = id
        self.$userAnonymized.id = userAnonymizedID
        self.$activityCategory.id = activityCategoryID
        self.kind = kind
        self.maxDurationMinutes = maxDurationMinutes
        self.zones = zones
        self.creationTime = creationTime
    }
}
