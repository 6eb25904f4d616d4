import FluentKit

/// Whether the workers have taken an announcement's recipient snapshot. The `POST` used to copy every anonymized id
/// inside the request (1.2 s at 100,000 users); now it stores the announcement alone and the fan-out takes the
/// snapshot. Announcements stored before this had theirs taken in the request: `true` for them.
package struct AddSnapshotTakenToSystemAnnouncements: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(SystemAnnouncement.schema).field("snapshot_taken", .bool, .required, .sql(.default(true))).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(SystemAnnouncement.schema).deleteField("snapshot_taken").update()
    }
}
