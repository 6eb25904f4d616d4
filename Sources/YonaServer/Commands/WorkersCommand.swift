import ArgumentParser
import Foundation
import Vapor
import YonaAPI

/// `yona-server workers` (or `serve --workers-only`): the background jobs (push outbox, announcement fan-out,
/// housekeeping) without the public HTTP listener, until SIGTERM or SIGINT; with an internal port (operations.md
/// "Safe defaults"), the internal listener too, so `/metrics` shows how the jobs fare.
struct WorkersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workers", abstract: "Runs the push workers without the HTTP server (what `serve --workers-only` starts)")

    func run() async throws {
        try await YonaRuntime.withApplication(.server) { app in
            guard app.yona.config.push.workersEnabled else {
                throw CommandFailure.usage("--workers-only with YONA_PUSH_WORKERS=false would run nothing")
            }
            try await app.asyncBoot()
            try await YonaRuntime.runServices(app, publicListener: false)
        }
    }
}
