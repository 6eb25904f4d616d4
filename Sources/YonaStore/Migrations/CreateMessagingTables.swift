import FluentKit
import Foundation

/// Inbox keys: the named inbox (identity side, for messages between identities) and the anonymous inbox
/// (anonymized side). Public keys only; the secret keys are in the owners' encrypted private data.
package struct AddInboxPublicKeys: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema).field("named_inbox_public_key", .data).update()
        try await database.schema(UserAnonymized.schema).field("anonymous_inbox_public_key", .data).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("named_inbox_public_key").update()
        try await database.schema(UserAnonymized.schema).deleteField("anonymous_inbox_public_key").update()
    }
}

package struct CreateMessages: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(Message.schema)
            .field("id", .int64, .identifier(auto: false))
            .field("user_anonymized_id", .uuid, .required, .references(UserAnonymized.schema, "id", onDelete: .cascade))
            .field("creation_time", .datetime, .required)
            .field("sealed_payload", .data, .required)
            .field("is_read", .bool, .required)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(Message.schema).delete()
    }
}

package struct CreateActivities: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(Activity.schema)
            .id()
            .field("user_anonymized_id", .uuid, .required, .references(UserAnonymized.schema, "id", onDelete: .cascade))
            .field("device_anonymized_id", .uuid, .required, .references(DeviceAnonymized.schema, "id", onDelete: .cascade))
            .field("goal_id", .uuid, .required, .references(Goal.schema, "id", onDelete: .cascade))
            .field("start_time", .datetime, .required)
            .field("end_time", .datetime, .required)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(Activity.schema).delete()
    }
}

package struct CreatePushOutbox: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(PendingPush.schema)
            .id()
            .field("device_anonymized_id", .uuid, .required, .references(DeviceAnonymized.schema, "id", onDelete: .cascade))
            .field("message_id", .int64, .required)
            .field("state", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime, .required)
            .field("created_at", .datetime, .required)
            .unique(on: "device_anonymized_id", "message_id")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(PendingPush.schema).delete()
    }
}

package struct CreateProcessedAnalyzerEvents: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(ProcessedAnalyzerEvent.schema)
            .id()
            .field("key_hash", .string, .required)
            .field("processed_at", .datetime, .required)
            .unique(on: "key_hash")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(ProcessedAnalyzerEvent.schema).delete()
    }
}
