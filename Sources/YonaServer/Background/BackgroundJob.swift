import Foundation
import Logging
import ServiceLifecycle
import YonaDomain
import YonaObservability
import YonaStore

/// One background job of `serve` or `workers` (the push outbox, the announcement fan-out, a purge), run as a
/// `Service` of the process's `ServiceGroup`. A round that fails is logged with its cause and counted
/// (`yona_background_job_failures_total`), and the job waits longer after each failure in a row (up to
/// `maximumBackoff`) before it tries again: a database that went away gets no storm of queries, and the job
/// comes back by itself once it is reachable. Graceful shutdown lets the round in progress finish (a push
/// round marks what it sent) and ends the wait between rounds at once.
///
/// A round has a deadline (`deadline`): a round still running then (a database call that never completed, issue 36)
/// is cancelled and abandoned (`Abandoning`), logged and counted as a failure like any other, and the job goes on with its next
/// round after the backoff. Every round is bounded (batches, a bounded drain), so only a stuck one comes near it.
struct BackgroundJob: Service, CustomStringConvertible {
    let name: String
    /// The pause after a round that found nothing to do.
    let idle: Duration
    var maximumBackoff: Duration = .seconds(60)
    /// `BackgroundJobs` sets 0.8 of the push lease and 30 s (78 s by default): above what any bounded round takes.
    var deadline: Duration = .seconds(78)
    var logger: Logger
    let metrics: YonaMetrics
    /// One round; returns whether it found work, in which case the next round starts at once.
    let round: @Sendable () async throws -> Bool

    var description: String { name }

    func run() async {
        var failuresInARow = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let pause: Duration
            do {
                let foundWork = try await Abandoning.after(deadline, round)
                if failuresInARow > 0 {
                    logger.notice("background job recovered", metadata: ["job": .string(name), "failures": .stringConvertible(failuresInARow)])
                }
                failuresInARow = 0
                metrics.backgroundJobSucceeded(name)
                if foundWork { continue }
                pause = idle
            } catch {
                if Task.isCancelled { break }
                failuresInARow += 1
                metrics.backgroundJobFailed(name)
                pause = Self.backoff(after: failuresInARow, idle: idle, maximum: maximumBackoff)
                logger.error(
                    "background job failed",
                    metadata: [
                        "job": .string(name), "error": .string(String(reflecting: error)),
                        "failures_in_a_row": .stringConvertible(failuresInARow), "retry_in_s": .stringConvertible(pause.components.seconds),
                    ])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
        }
    }

    /// Doubles from one second (or the idle pause, if longer) with each failure in a row, jittered by up to a
    /// quarter so that instances that failed together do not retry together.
    static func backoff(after failures: Int, idle: Duration, maximum: Duration) -> Duration {
        let base = max(idle, .seconds(1))
        let doubled = base * Double(1 << min(failures - 1, 16))
        let capped = min(doubled, maximum)
        return capped * Double.random(in: 0.75...1.0)
    }
}
