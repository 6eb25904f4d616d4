import FluentKit
import Foundation

/// A goal of an anonymized user: a budget (0 minutes is a no-go goal, a danger zone) or time zones.
package final class Goal: Model, @unchecked Sendable {
    package static let schema = "goals"
    /// Yona dates every mandatory goal 2017-01-01T12:00Z. It also keeps the row from telling when its user joined
    /// (which could join the two sides of the store).
    package static let mandatoryCreationTime = Date(timeIntervalSince1970: 1_483_272_000)

    // managed
    @ID(key: .id) package var id: UUID?
    /// When the goal started to count; an activity only counts for goals that existed when it happened.
    @Field(key: "creation_time") package var creationTime: Date

    // data
    @Field(key: "kind") package var kind: String
    @OptionalField(key: "max_duration_minutes") package var maxDurationMinutes: Int?
    @Field(key: "zones") package var zones: [String]

    // relationships
    @Parent(key: "user_anonymized_id") package var userAnonymized: UserAnonymized
    @Parent(key: "activity_category_id") package var activityCategory: ActivityCategory

    /// Whether the goal's category is a mandatory no-go one, when the goal was read with that flag (not stored here:
    /// a plain property, which Fluent leaves alone). Otherwise the eager-loaded category tells.
    package var onMandatoryCategory: Bool?

    /// Whether the goal's category is a mandatory no-go one (the goal then cannot be changed or removed).
    package var isOnMandatoryCategory: Bool { onMandatoryCategory ?? activityCategory.mandatoryNoGo }

    package init() {}

    package init(
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
