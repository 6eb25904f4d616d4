import FluentKit

/// Yona's "last seen": the day (Europe/Amsterdam, `yyyy-MM-dd`) of a device's latest reported activity. A day, not
/// an instant, on the anonymized side only.
package struct AddLastMonitoredActivityDate: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).field("last_monitored_activity_date", .string).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).deleteField("last_monitored_activity_date").update()
    }
}
