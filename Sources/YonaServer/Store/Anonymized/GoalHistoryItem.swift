import Fluent
import Foundation

/// A goal as it was before a change: what it asked from `creationTime` until `endTime`. Reports and late analyzer
/// events need the version in force on each day; the apps show these as Yona's goal history items.
final class GoalHistoryItem: Model, @unchecked Sendable {
    static let schema = "goal_history_items"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "creation_time") var creationTime: Date
    @Field(key: "end_time") var endTime: Date

    // data
    @Field(key: "kind") var kind: String
    @OptionalField(key: "max_duration_minutes") var maxDurationMinutes: Int?
    @Field(key: "zones") var zones: [String]

    // relationships
    @Parent(key: "goal_id") var goal: Goal
    @Parent(key: "activity_category_id") var activityCategory: ActivityCategory

    init() {}

    /// The version of `goal` that ends at `endTime`.
    init(of goal: Goal, endTime: Date) {
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
