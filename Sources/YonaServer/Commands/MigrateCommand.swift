import ArgumentParser
import Fluent
import Foundation
import Vapor
import YonaAPI

/// `yona-server migrate`: applies pending migrations without asking, so scripts and containers can run it;
/// `serve` does the same at start-up. It starts no background work and writes no secret.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Applies pending database migrations (serve also does this at start-up)")

    func run() async throws {
        try await YonaRuntime.withApplication(.command) { app in
            let migrator = app.migrator
            do {
                let applied = try await app.withMigrationLock {
                    try await migrator.setupIfNeeded().get()
                    let pending = try await migrator.previewPrepareBatch().get()
                    if !pending.isEmpty { try await migrator.prepareBatch().get() }
                    return pending.count
                }
                print(applied == 0 ? "database is up to date" : "migrations applied: \(applied)")
            } catch {
                throw CommandFailure.failed("migration failed (\(String(reflecting: error)))")
            }
        }
    }
}
