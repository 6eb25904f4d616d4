import FluentKit

/// The numbers allowed to sign up while sign-up is limited (Yona's `WhiteListedNumber`).
package struct CreateWhiteListedNumbers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(WhiteListedNumber.schema)
            .id()
            .field("mobile_number", .string, .required)
            .unique(on: "mobile_number")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(WhiteListedNumber.schema).delete()
    }
}
