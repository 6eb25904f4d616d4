import FluentKit
import Foundation

package struct CreateGoalHistoryItems: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(GoalHistoryItem.schema)
            .id()
            .field("goal_id", .uuid, .required, .references(Goal.schema, "id", onDelete: .cascade))
            .field("activity_category_id", .uuid, .required, .references(ActivityCategory.schema, "id", onDelete: .cascade))
            .field("kind", .string, .required)
            .field("max_duration_minutes", .int)
            .field("zones", .array(of: .string), .required)
            .field("creation_time", .datetime, .required)
            .field("end_time", .datetime, .required)
            .create()
        try await database.sql.raw("CREATE INDEX goal_history_items_goal ON goal_history_items (goal_id, creation_time)").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(GoalHistoryItem.schema).delete()
    }
}
