import ArgumentParser
import Fluent
import Foundation
import Vapor
import YonaAPI
import YonaDomain
import YonaStore

/// `yona-server categories import FILE`: loads activity categories from a JSON array in the admin API's format
/// (`ActivityCategoryImport` says how entries match existing categories).
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

    private static func importing(_ entries: [ActivityCategoryImport.Entry], on db: any Database) async throws {
        let (created, updated) = try await ActivityCategoryImport.apply(entries, on: db)
        print("categories imported: \(created) created, \(updated) updated")
    }

    /// Checks every entry with the admin API's rules; the first bad one stops the import with its index.
    static func parse(_ data: Data) throws -> [ActivityCategoryImport.Entry] {
        do {
            return try ActivityCategoryImport.parse(data)
        } catch {
            throw CommandFailure.usage(error.description)
        }
    }
}
