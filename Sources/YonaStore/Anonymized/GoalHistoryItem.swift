import FluentKit
import Foundation

/// A goal as it was before a change: what it asked from `creationTime` until `endTime`. Reports and late analyzer
/// events need the version in force on each day; the apps show these as Yona's goal history items.
package final class GoalHistoryItem: Model, @unchecked Sendable {
    package static let schema = "goal_history_items"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "creation_time") package var creationTime: Date
    @Field(key: "end_time") package var endTime: Date

    // data
    @Field(key: "kind") package var kind: String
    @OptionalField(key: "max_duration_minutes") package var maxDurationMinutes: Int?
    @Field(key: "zones") package var zones: [String]

    // relationships
    @Parent(key: "goal_id") package var goal: Goal
    @Parent(key: "activity_category_id") package var activityCategory: ActivityCategory

    package init() {}

    /// The version of `goal` that ends at `endTime`.
    package init(of goal: Goal, endTime: Date) {
        id = UUID()
        $goal.id = goal.id!
        $activityCategory.id = goal.$activityCategory.id
        creationTime = goal.creationTime
        self.endTime = endTime
        kind = goal.kind
        maxDurationMinutes = goal.maxDurationMinutes
        zones = goal.zones
    }
}
