import FluentKit
import SQLKit

/// A removed device's activities stay, unlinked from it, as Yona's do (`disconnectAllActivitiesFromDevice`): the days
/// they were part of keep their minutes (Yona's 'Richard deletes a devices on which activities were done'). Until
/// now `activities.device_anonymized_id` was required and deleted with its device. SQLite cannot change a column's
/// constraints in place: the table is rebuilt from its own definition with only that column changed.
package struct KeepActivitiesOfRemovedDevices: AsyncMigration {
    package static let cascading = #""device_anonymized_id" UUID NOT NULL REFERENCES "devices_anonymized" ("id") ON DELETE CASCADE"#
    package static let unlinking = #""device_anonymized_id" UUID REFERENCES "devices_anonymized" ("id") ON DELETE SET NULL"#

    package func prepare(on database: any Database) async throws {
        try await change(on: database, from: Self.cascading, to: Self.unlinking, postgresRule: "SET NULL", required: false)
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DELETE FROM activities WHERE device_anonymized_id IS NULL").run()
        try await change(on: database, from: Self.unlinking, to: Self.cascading, postgresRule: "CASCADE", required: true)
    }

    private func change(on database: any Database, from old: String, to new: String, postgresRule: String, required: Bool) async throws {
        let sql = database.sql
        if sql.dialect.name == "sqlite" {
            try await database.transaction { tx in try await SQLiteTableRebuild.rebuild("activities", replacing: old, with: new, on: tx.sql) }
        } else {
            let constraints = try await sql.raw(
                """
                SELECT conname FROM pg_constraint WHERE conrelid = 'activities'::regclass AND contype = 'f'
                AND pg_get_constraintdef(oid) LIKE '%(device_anonymized_id)%'
                """
            ).all().map { try $0.decode(column: "conname", as: String.self) }
            for name in constraints {
                try await sql.raw("ALTER TABLE activities DROP CONSTRAINT \(ident: name)").run()
            }
            try await sql.raw(
                """
                ALTER TABLE activities ADD CONSTRAINT activities_device_anonymized_id_fkey FOREIGN KEY (device_anonymized_id)
                REFERENCES devices_anonymized (id) ON DELETE \(unsafeRaw: postgresRule)
                """
            ).run()
            try await sql.raw(
                "ALTER TABLE activities ALTER COLUMN device_anonymized_id \(unsafeRaw: required ? "SET" : "DROP") NOT NULL"
            ).run()
        }
    }
}

/// A table is not shaped as the migration expects (a database changed by hand): stop, rather than guess.
package struct MigrationShapeError: Error, CustomStringConvertible {
    package let table: String
    package var description: String { "the \(table) table is not as this migration expects; it changed nothing" }
}
