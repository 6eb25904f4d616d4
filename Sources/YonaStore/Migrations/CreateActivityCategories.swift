import FluentKit
import Foundation

package struct CreateActivityCategories: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(ActivityCategory.schema)
            .id()
            .field("names", .dictionary(of: .string), .required)
            .field("descriptions", .dictionary(of: .string), .required)
            .field("classifier_categories", .array(of: .string), .required)
            .field("applications", .array(of: .string), .required)
            .field("mandatory_no_go", .bool, .required)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(ActivityCategory.schema).delete()
    }
}

/// The default set the server ships (api.md "Activity categories and goals"); ids are fixed so every
/// installation and every instance agrees on them.
package struct SeedDefaultActivityCategories: AsyncMigration {
    package static let defaults: [ActivityCategory] = [
        ActivityCategory(
            id: UUID(uuidString: "2072aa78-96ac-472c-942d-a5942dd9c21f")!,
            names: ["en-US": "Gambling", "nl-NL": "Gokken"],
            descriptions: ["en-US": "Online casinos, betting and lotteries.", "nl-NL": "Online casino's, wedden en loterijen."],
            classifierCategories: ["gambling", "Gambling", "lotto"], applications: ["Poker App", "Lotto"], mandatoryNoGo: false),
        ActivityCategory(
            id: UUID(uuidString: "bc7f8712-7073-4103-8950-bf51acc68d83")!,
            names: ["en-US": "News", "nl-NL": "Nieuws"],
            descriptions: ["en-US": "News sites, media and forums.", "nl-NL": "Nieuwssites, media en fora."],
            classifierCategories: ["news/media", "News", "newsgroups/forums"], applications: ["NU.nl"], mandatoryNoGo: false),
        ActivityCategory(
            id: UUID(uuidString: "cea0db14-68b3-422b-a22e-a92601e25dc2")!,
            names: ["en-US": "Social", "nl-NL": "Sociale media"],
            descriptions: ["en-US": "Social networks.", "nl-NL": "Sociale netwerken."],
            classifierCategories: ["social", "Social Networking Sites", "Facebook"], applications: ["Facebook", "Instagram"], mandatoryNoGo: false),
        ActivityCategory(
            id: UUID(uuidString: "0d5863c5-0086-4b42-ae2b-49bd3d144ddc")!,
            names: ["en-US": "Communication", "nl-NL": "Communicatie"],
            descriptions: ["en-US": "Chat and webmail.", "nl-NL": "Chat en webmail."],
            classifierCategories: ["Chat", "Webmail"], applications: ["WhatsApp"], mandatoryNoGo: false),
        ActivityCategory(
            id: UUID(uuidString: "230ca714-8200-4890-a66b-3c11a317afc2")!,
            names: ["en-US": "Multimedia", "nl-NL": "Multimedia"],
            descriptions: ["en-US": "Video and music streaming.", "nl-NL": "Video- en muziekstreaming."],
            classifierCategories: ["YouTube", "Netflix"], applications: ["YouTube", "Netflix"], mandatoryNoGo: false),
        ActivityCategory(
            id: UUID(uuidString: "f798c451-7e44-41f0-b655-6bcdcbeaf178")!,
            names: ["en-US": "Adult content", "nl-NL": "Erotiek"],
            descriptions: ["en-US": "Sites with adult content.", "nl-NL": "Sites met erotische inhoud."],
            classifierCategories: ["Adult Sites", "Adult Themes", "Sexuality Sites"], applications: [], mandatoryNoGo: true),
    ]

    package func prepare(on database: any Database) async throws {
        for category in Self.defaults {
            try await ActivityCategory(
                id: category.id!, names: category.names, descriptions: category.descriptions,
                classifierCategories: category.classifierCategories, applications: category.applications,
                mandatoryNoGo: category.mandatoryNoGo
            ).create(on: database)
        }
    }

    package func revert(on database: any Database) async throws {
        try await ActivityCategory.query(on: database).filter(\.$id ~~ Self.defaults.compactMap(\.id)).delete()
    }
}
