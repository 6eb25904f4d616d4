import FluentKit
import Foundation

/// An invited account gets its Yona password when it is made, kept under its temporary password until taken over.
package struct AddInvitationPasswordToUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema).field("invitation_password", .data).update()
        try await database.schema(User.schema).field("invitation_salt", .data).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("invitation_password").update()
        try await database.schema(User.schema).deleteField("invitation_salt").update()
    }
}
