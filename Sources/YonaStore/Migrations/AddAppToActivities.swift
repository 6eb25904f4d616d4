import FluentKit

/// Which app an activity was measured in, for the raw activities of a day (Yona's `…/raw/`) and for Yona's merge
/// rule (an app's session is extended by the same app only; network activity by network activity). `app_tag` is a
/// per-user keyed hash ("" for network activity), `app_sealed` the name sealed to the user's anonymous inbox
/// (`ActivityApp`). Activities stored before this have neither: they read as network activity.
package struct AddAppToActivities: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(Activity.schema)
            .field("app_tag", .string, .required, .sql(.default(Activity.networkAppTag)))
            .update()
        try await database.schema(Activity.schema).field("app_sealed", .data).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(Activity.schema).deleteField("app_sealed").update()
        try await database.schema(Activity.schema).deleteField("app_tag").update()
    }
}
