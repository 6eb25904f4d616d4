import FluentKit
import Foundation

package struct CreateUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema)
            .id()
            .field("mobile_number", .string, .required)
            .field("mobile_number_confirmed", .bool, .required)
            .field("key_salt", .data, .required)
            .field("private_data", .data, .required)
            .field("confirmation_code", .data)
            .field("confirmation_failed_attempts", .int, .required)
            .unique(on: "mobile_number")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).delete()
    }
}
