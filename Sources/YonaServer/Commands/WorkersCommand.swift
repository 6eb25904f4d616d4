import Foundation
import Vapor

/// `yona-server serve --workers-only`: the push workers (outbox, announcement fan-out, housekeeping) without
/// the HTTP server, until SIGINT or SIGTERM. The workers run as lifecycle handlers, so this only waits.
struct WorkersCommand: AsyncCommand {
    struct Signature: CommandSignature {}

    var help: String { "Runs the push workers without the HTTP server (what `serve --workers-only` starts)" }

    func run(using context: CommandContext, signature: Signature) async throws {
        guard context.application.yona.config.push.workersEnabled else {
            throw CommandFailure.usage("--workers-only with YONA_PUSH_WORKERS=false would run nothing")
        }
        context.application.logger.info("push workers running without the HTTP server")
        await Self.waitForTermination()
        context.application.logger.info("push workers stopping")
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
