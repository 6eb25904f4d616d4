import FluentKit

/// Besides Firebase's Instance ID, a device may be reached directly: an APNs device token (hex) or a Web Push
/// subscription (its JSON: endpoint and keys). A device holds at most one of the three; `firebase_instance_id_updated_at`
/// dates whichever it holds (stale addresses are pruned by it).
package struct AddPushAddressesToDevicesAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).field("apns_token", .string).update()
        try await database.schema(DeviceAnonymized.schema).field("web_push_subscription", .string).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).deleteField("web_push_subscription").update()
        try await database.schema(DeviceAnonymized.schema).deleteField("apns_token").update()
    }
}
