/// A deadline for work that may wait on a call that never completes (a database connection that died without
/// saying so, issue 36): the work runs in a task of its own, and the caller stops waiting for it at the deadline.
/// Structured concurrency would wait for a cancelled child that never returns; this does not.
package enum Abandoning {
    /// Thrown when the work did not end by its deadline.
    package struct DeadlineExceeded: Error, CustomStringConvertible {
        package let deadline: Duration
        package var description: String { "did not end within \(deadline.components.seconds) s and was abandoned" }
    }

    /// Runs `body` and returns its result, or throws `DeadlineExceeded` once `deadline` has passed: the body's task is
    /// then cancelled and left behind, whether or not it heeds the cancellation. The task inherits the caller's
    /// task-locals (a graceful shutdown among them); the caller's cancellation cancels it.
    package static func after<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = AsyncThrowingStream<T, any Error>.makeStream()
        let work = Task {
            do {
                outcome.continuation.yield(try await body())
                outcome.continuation.finish()
            } catch {
                outcome.continuation.finish(throwing: error)
            }
        }
        let timer = Task {
            try await Task.sleep(for: deadline)
            outcome.continuation.finish(throwing: DeadlineExceeded(deadline: deadline))
        }
        defer { timer.cancel() }
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
}
