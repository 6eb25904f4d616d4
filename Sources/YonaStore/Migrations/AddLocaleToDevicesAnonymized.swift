import FluentKit
import Foundation

/// The locale the app last opened with, so content-free pushes and system messages can pick a language.
package struct AddLocaleToDevicesAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).field("locale", .string).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).deleteField("locale").update()
    }
}
