import ArgumentParser
import Fluent
import Foundation
import Vapor
import YonaAPI
import YonaDomain
import YonaStore

/// `yona-server categories import FILE`: loads activity categories from a JSON array in the admin API's
/// format (`localizableName`, `localizableDescription`, `smoothwallCategories`, `applications`,
/// `mandatoryNoGo`, optional `id`). An entry updates the category with its `id`, else the one with the same
/// en-US name, else it is created. All entries are checked before anything is written, and written in one
/// transaction. Categories missing from the file are left alone.
struct CategoriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "categories", abstract: "Imports activity categories from a JSON file")

    @ArgumentParser.Argument(help: "What to do: import")
    var action: String
    @ArgumentParser.Argument(help: "Path of the JSON file (an array of categories)")
    var file: String

    func run() async throws {
        guard action == "import" else { throw CommandFailure.usage("categories knows only 'import'") }
        guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure.usage("cannot read \(file)") }
        let entries = try Self.parse(data)
        try await YonaRuntime.withApplication(.command) { app in try await Self.importing(entries, on: app.db) }
    }

    private static func importing(_ entries: [Entry], on db: any Database) async throws {
        let (created, updated) = try await db.transaction { tx in
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
                    match.names = entry.category.names
                    match.descriptions = entry.category.descriptions
                    match.classifierCategories = entry.category.classifierCategories
                    match.applications = entry.category.applications
                    match.mandatoryNoGo = entry.category.mandatoryNoGo
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
        print("categories imported: \(created) created, \(updated) updated")
    }

    struct Entry {
        let id: UUID?
        let category: ActivityCategory
    }

    /// Checks every entry with the admin API's rules; the first bad one stops the import with its index.
    static func parse(_ data: Data) throws -> [Entry] {
        guard let array = try? JSONSerialization.jsonObject(with: data) as? [Any] else {
            throw CommandFailure.usage("the file must hold a JSON array of categories")
        }
        return try array.enumerated().map { index, element in
            guard let object = element as? [String: Any] else { throw CommandFailure.usage("entry \(index) is not an object") }
            var id: UUID?
            if let raw = object["id"] {
                guard let text = raw as? String, let parsed = UUID(uuidString: text) else {
                    throw CommandFailure.usage("entry \(index) has a malformed id")
                }
                id = parsed
            }
            do {
                // The admin API's own rules (`id` is one of its ignored keys).
                let request = try ActivityCategoryRequest.decodeStrict(from: try JSONSerialization.data(withJSONObject: object))
                return Entry(id: id, category: try request.toModel(id: id ?? UUID()))
            } catch let error as YonaError where error.code == .extraProperty {
                throw CommandFailure.usage("entry \(index) has a property the admin API does not know")
            } catch {
                throw CommandFailure.usage("entry \(index) is not a valid category (it needs localizableName with en-US and smoothwallCategories)")
            }
        }
    }
}
