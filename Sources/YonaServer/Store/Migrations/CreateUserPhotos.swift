import Fluent

/// Profile photos (`UserPhotoRecord`): a lookup hash, the sealed PNG, and the purge day of a replaced one.
struct CreateUserPhotos: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(UserPhotoRecord.schema)
            .id()
            .field("sealed_png", .data, .required)
            .field("expires_on", .string)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(UserPhotoRecord.schema).delete()
    }
}
