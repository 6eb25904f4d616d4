import FluentKit
import Foundation
import SQLKit

/// The per-device notification switch, and when the app last sent its Instance ID (for pruning stale tokens).
package struct AddNotificationSettingsToDevicesAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema)
            .field("notifications_enabled", .bool, .required, .sql(.default(true))).update()
        try await database.schema(DeviceAnonymized.schema).field("firebase_instance_id_updated_at", .datetime).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).deleteField("notifications_enabled").update()
        try await database.schema(DeviceAnonymized.schema).deleteField("firebase_instance_id_updated_at").update()
    }
}
