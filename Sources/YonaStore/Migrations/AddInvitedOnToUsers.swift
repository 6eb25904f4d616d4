import FluentKit
import Foundation

/// The day an account was created on a buddy request, so one never taken over can be removed.
package struct AddInvitedOnToUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema).field("invited_on", .datetime).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("invited_on").update()
    }
}
