import FluentKit
import SQLKit

/// Reports read a goal's activities of a few days (`goal_id`, `end_time` after the first day), and the analyzer
/// extends a device's latest activity on a goal: without these both scanned every activity ever recorded.
package struct AddActivityIndexes: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.sql.raw("CREATE INDEX activities_goal_end ON activities (goal_id, end_time)").run()
        try await database.sql.raw("CREATE INDEX activities_device_goal_end ON activities (device_anonymized_id, goal_id, end_time)").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX activities_device_goal_end").run()
        try await database.sql.raw("DROP INDEX activities_goal_end").run()
    }
}
