import Fluent
import Foundation
import Vapor

/// `yona-server migrate`: applies pending migrations without asking (it replaces Vapor's interactive one,
/// so scripts and containers can run it); `serve` does the same at start-up.
struct MigrateCommand: AsyncCommand {
    struct Signature: CommandSignature {}

    var help: String { "Applies pending database migrations (serve also does this at start-up)" }

    func run(using context: CommandContext, signature: Signature) async throws {
        let migrator = context.application.migrator
        do {
            try await migrator.setupIfNeeded().get()
            let pending = try await migrator.previewPrepareBatch().get()
            guard !pending.isEmpty else {
                context.console.print("database is up to date")
                return
            }
            try await migrator.prepareBatch().get()
            context.console.print("migrations applied: \(pending.count)")
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure.failed("migration failed (\(String(reflecting: type(of: error))))")
        }
    }
}
