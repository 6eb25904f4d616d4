import Fluent
import Foundation
import YonaDomain
import YonaStore

/// Activity categories in and out as a JSON array in the admin API's format (`localizableName`,
/// `localizableDescription`, `smoothwallCategories`, `applications`, `mandatoryNoGo`, optional `id`): what
/// `yona-server categories import` reads and the console imports and exports. An entry updates the category with
/// its `id`, else the one with the same en-US name, else it is created. All entries are checked before anything
/// is written, and written in one transaction. Categories missing from the array are left alone.
package enum ActivityCategoryImport {
    package struct Entry: Sendable {
        package let id: UUID?
        package let category: ActivityCategory
    }

    /// Why an array cannot be imported, naming the first bad entry.
    package struct Problem: Error, CustomStringConvertible {
        package let description: String
    }

    /// Checks every entry with the admin API's rules; the first bad one stops the import with its index.
    package static func parse(_ data: Data) throws(Problem) -> [Entry] {
        guard let array = try? JSONSerialization.jsonObject(with: data) as? [Any] else {
            throw Problem(description: "the file must hold a JSON array of categories")
        }
        var entries: [Entry] = []
        for (index, element) in array.enumerated() {
            guard let object = element as? [String: Any] else { throw Problem(description: "entry \(index) is not an object") }
            var id: UUID?
            if let raw = object["id"] {
                guard let text = raw as? String, let parsed = UUID(uuidString: text) else {
                    throw Problem(description: "entry \(index) has a malformed id")
                }
                id = parsed
            }
            do {
                // The admin API's own rules (`id` is one of its ignored keys).
                let request = try ActivityCategoryRequest.decodeStrict(from: try JSONSerialization.data(withJSONObject: object))
                entries.append(Entry(id: id, category: try request.toModel(id: id ?? UUID())))
            } catch let error as YonaError where error.code == .extraProperty {
                throw Problem(description: "entry \(index) has a property the admin API does not know")
            } catch {
                throw Problem(description: "entry \(index) is not a valid category (it needs localizableName with en-US and smoothwallCategories)")
            }
        }
        return entries
    }

    /// Writes the entries in one transaction; how many were created and updated.
    package static func apply(_ entries: [Entry], on db: any Database) async throws -> (created: Int, updated: Int) {
        try await db.transaction { tx in
            var created = 0
            var updated = 0
            let existing = try await ActivityCategory.query(on: tx).all()
            for entry in entries {
                let match =
                    existing.first { $0.id == entry.id }
                    ?? existing.first {
                        entry.id == nil && $0.names[YonaLocale.fallback.rawValue] == entry.category.names[YonaLocale.fallback.rawValue]
                    }
                if let match {
                    match.adopt(entry.category)
                    try await match.save(on: tx)
                    updated += 1
                } else {
                    entry.category.id = entry.id ?? UUID()
                    try await entry.category.create(on: tx)
                    created += 1
                }
            }
            return (created, updated)
        }
    }

    /// Every category in the import format, sorted by English name: an export imports back unchanged.
    package static func export(on db: any Database) async throws -> Data {
        let categories = try await ActivityCategory.query(on: db).all()
            .sorted { ($0.names[YonaLocale.fallback.rawValue] ?? "") < ($1.names[YonaLocale.fallback.rawValue] ?? "") }
        let array: [[String: Any]] = categories.map {
            [
                "id": $0.id?.uuidString.lowercased() ?? "", "localizableName": $0.names, "localizableDescription": $0.descriptions,
                "smoothwallCategories": $0.classifierCategories, "applications": $0.applications, "mandatoryNoGo": $0.mandatoryNoGo,
            ]
        }
        return try JSONSerialization.data(withJSONObject: array, options: [.prettyPrinted, .sortedKeys])
    }
}
