import ArgumentParser
import Foundation
import Vapor

/// `yona-server workers` (or `serve --workers-only`): the push workers (outbox, announcement fan-out,
/// housekeeping) without the HTTP server, until SIGINT or SIGTERM. The workers run as lifecycle handlers of the
/// booted application, so this only waits.
struct WorkersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workers", abstract: "Runs the push workers without the HTTP server (what `serve --workers-only` starts)")

    func run() async throws {
        try await YonaRuntime.withApplication(.server) { app in
            guard app.yona.config.push.workersEnabled else {
                throw CommandFailure.usage("--workers-only with YONA_PUSH_WORKERS=false would run nothing")
            }
            try await app.asyncBoot()
            app.logger.info("push workers running without the HTTP server")
            await Self.waitForTermination()
            app.logger.info("push workers stopping")
        }
    }

    /// Suspends until the process is asked to stop.
    static func waitForTermination() async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        for await _ in stream { break }
        sources.forEach { $0.cancel() }
    }
}
