import FluentKit
import Foundation

package struct CreateDevicesAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema)
            .id()
            .field(
                "user_anonymized_id", .uuid, .required,
                .references(UserAnonymized.schema, "id", onDelete: .cascade)
            )
            .field("device_index", .int, .required)
            .field("operating_system", .string, .required)
            .field("app_version", .string)
            .field("app_version_code", .int)
            .field("firebase_instance_id", .string)
            .field("app_last_opened_date", .string)
            .unique(on: "user_anonymized_id", "device_index")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).delete()
    }
}
