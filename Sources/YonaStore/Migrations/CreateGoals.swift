import FluentKit
import Foundation

package struct CreateGoals: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(Goal.schema)
            .id()
            .field("user_anonymized_id", .uuid, .required, .references(UserAnonymized.schema, "id", onDelete: .cascade))
            .field("activity_category_id", .uuid, .required, .references(ActivityCategory.schema, "id", onDelete: .cascade))
            .field("kind", .string, .required)
            .field("max_duration_minutes", .int)
            .field("zones", .array(of: .string), .required)
            .field("creation_time", .datetime, .required)
            .unique(on: "user_anonymized_id", "activity_category_id")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(Goal.schema).delete()
    }
}
