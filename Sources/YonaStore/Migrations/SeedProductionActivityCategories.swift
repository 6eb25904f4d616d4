import FluentKit
import Foundation

/// A production server's first start: Yona's production category set (`Categories/production.json`, Yona's
/// `dbinit/data/productionActivityCategories.json`: seven categories, Adult content the mandatory no-go) replaces
/// the test set the earlier migrations seeded, which Yona's integration tests and a test server keep. It touches
/// only a database this very start created: no user yet and the categories exactly as seeded. Any other database
/// keeps its categories (operations.md "Activity categories": `categories import` switches either way).
package struct SeedProductionActivityCategories: AsyncMigration {
    /// False on a test server: the migration is then recorded and changes nothing.
    package let production: Bool

    package init(production: Bool) {
        self.production = production
    }

    /// One entry of Yona's category files (the `categories import` format).
    private struct Entry: Decodable {
        let id: UUID
        let localizableName: [String: String]
        let localizableDescription: [String: String]
        let smoothwallCategories: [String]
        let applications: [String]
        let mandatoryNoGo: Bool
    }

    /// Yona's production set, as the binary carries it.
    package static func productionSet() throws -> [ActivityCategory] {
        try JSONDecoder().decode([Entry].self, from: Data(PackageResources.production_json)).map {
            ActivityCategory(
                id: $0.id, names: $0.localizableName, descriptions: $0.localizableDescription,
                classifierCategories: $0.smoothwallCategories, applications: $0.applications, mandatoryNoGo: $0.mandatoryNoGo)
        }
    }

    package func prepare(on database: any Database) async throws {
        guard production else { return }
        try await database.transaction { tx in
            guard try await UserAnonymized.query(on: tx).count() == 0, try await User.query(on: tx).count() == 0 else { return }
            let seeded = AdoptYonaActivityCategories.replacements.map(\.category)
            let present = try await ActivityCategory.query(on: tx).all()
            func same(_ one: ActivityCategory, _ other: ActivityCategory) -> Bool {
                one.id == other.id && one.names == other.names && one.descriptions == other.descriptions
                    && one.classifierCategories == other.classifierCategories && one.applications == other.applications
                    && one.mandatoryNoGo == other.mandatoryNoGo
            }
            guard present.count == seeded.count, present.allSatisfy({ row in seeded.contains { same(row, $0) } }) else { return }
            try await ActivityCategory.query(on: tx).delete()
            for category in try Self.productionSet() { try await category.create(on: tx) }
        }
    }

    package func revert(on database: any Database) async throws {}
}
