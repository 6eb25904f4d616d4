import Foundation
import Logging
import ServiceLifecycle
import YonaDomain

/// One background job of `serve` or `workers` (the push outbox, the announcement fan-out, a purge), run as a
/// `Service` of the process's `ServiceGroup`. A round that fails is logged with its cause and counted
/// (`yona_background_job_failures_total`), and the job waits longer after each failure in a row (up to
/// `maximumBackoff`) before it tries again: a database that went away gets no storm of queries, and the job
/// comes back by itself once it is reachable. Graceful shutdown lets the round in progress finish (a push
/// round marks what it sent) and ends the wait between rounds at once.
///
/// A round has a deadline (`deadline`): a round still running then (a database call that never completed, issue 36)
/// is cancelled and abandoned, logged and counted as a failure like any other, and the job goes on with its next
/// round after the backoff. Every round is bounded (batches, a bounded drain), so only a stuck one comes near it.
struct BackgroundJob: Service, CustomStringConvertible {
    let name: String
    /// The pause after a round that found nothing to do.
    let idle: Duration
    var maximumBackoff: Duration = .seconds(60)
    var deadline: Duration = Self.defaultDeadline
    /// Far above what a bounded round takes (a push drain round of 50,000 pushes takes about 10 s here).
    static let defaultDeadline: Duration = .seconds(120)
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
                let foundWork = try await Self.abandoning(after: deadline, round)
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

    /// Thrown for a round that did not end by its deadline.
    struct RoundExceededDeadline: Error, CustomStringConvertible {
        let deadline: Duration
        var description: String { "the round did not end within \(deadline.components.seconds) s and was abandoned" }
    }

    /// Runs `body` in a task of its own and returns its result, or throws `RoundExceededDeadline` once `deadline` has
    /// passed: the task is then cancelled and left behind, whether or not it heeds the cancellation (a call that never
    /// completes does not). The task inherits the caller's task-locals (graceful shutdown) and its cancellation.
    static func abandoning<T: Sendable>(after deadline: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let work = Task { try await body() }
        let outcome = AsyncThrowingStream<T, any Error>.makeStream()
        let timer = Task {
            try await Task.sleep(for: deadline)
            outcome.continuation.finish(throwing: RoundExceededDeadline(deadline: deadline))
        }
        let relay = Task {
            do { outcome.continuation.yield(try await work.value) } catch { outcome.continuation.finish(throwing: error) }
            outcome.continuation.finish()
        }
        defer {
            timer.cancel()
            relay.cancel()
        }
        return try await withTaskCancellationHandler {
            var results = outcome.stream.makeAsyncIterator()
            do {
                guard let value = try await results.next() else { throw CancellationError() }
                return value
            } catch {
                work.cancel()
                throw error
            }
        } onCancel: {
            work.cancel()
            outcome.continuation.finish(throwing: CancellationError())
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
