import ArgumentParser
import Fluent
import Foundation
import Vapor

/// `yona-server migrate`: applies pending migrations without asking, so scripts and containers can run it;
/// `serve` does the same at start-up. It starts no background work and writes no secret.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Applies pending database migrations (serve also does this at start-up)")

    func run() async throws {
        try await YonaRuntime.withApplication(.command) { app in
            let migrator = app.migrator
            do {
                try await migrator.setupIfNeeded().get()
                let pending = try await migrator.previewPrepareBatch().get()
                guard !pending.isEmpty else {
                    print("database is up to date")
                    return
                }
                try await migrator.prepareBatch().get()
                print("migrations applied: \(pending.count)")
            } catch let error as CommandFailure {
                throw error
            } catch {
                throw CommandFailure.failed("migration failed (\(String(reflecting: error)))")
            }
        }
    }
}
