import FluentKit

/// Profile photos (`UserPhotoRecord`): a lookup hash, the sealed PNG, and the purge day of a replaced one.
package struct CreateUserPhotos: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(UserPhotoRecord.schema)
            .id()
            .field("sealed_png", .data, .required)
            .field("expires_on", .string)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(UserPhotoRecord.schema).delete()
    }
}
