import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
import YonaObservability

@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// Issue 36: a background round that waits on a call that never completes (as the push drain once did after a
/// PostgreSQL restart) is abandoned at its deadline; the job counts the failure and goes on.
@Suite struct BackgroundJobTests {
    /// A call that never completes and does not heed cancellation: resumed only when the test is over.
    final class NeverCompletes: Sendable {
        let waiting = NIOLockedValueBox<[CheckedContinuation<Void, Never>]>([])
        func wait() async { await withCheckedContinuation { continuation in waiting.withLockedValue { $0.append(continuation) } } }
        func release() {
            let continuations = waiting.withLockedValue { list in
                let all = list
                list = []
                return all
            }
            for continuation in continuations { continuation.resume() }
        }
    }

    @Test func aStuckRoundIsAbandonedAtItsDeadlineAndTheJobGoesOn() async throws {
        let stuck = NeverCompletes()
        let rounds = NIOLockedValueBox(0)
        let metrics = YonaMetrics()
        var job = BackgroundJob(name: "stuck-once", idle: .milliseconds(20), logger: Logger(label: "test"), metrics: metrics) {
            let round = rounds.withLockedValue { count -> Int in
                count += 1
                return count
            }
            if round == 1 { await stuck.wait() }
            return false
        }
        job.deadline = .milliseconds(300)
        job.maximumBackoff = .milliseconds(100)
        let started = ContinuousClock.now
        let running = Task { await job.run() }
        // the first round is stuck for good; rounds go on after its deadline and the backoff (within half a second here;
        // the bound is for a machine whose cooperative threads the suite's Argon2id tests keep busy)
        while rounds.withLockedValue({ $0 }) < 3, ContinuousClock.now - started < .seconds(120) { try await Task.sleep(for: .milliseconds(20)) }
        let elapsed = ContinuousClock.now - started
        running.cancel()
        await running.value
        stuck.release()
        #expect(rounds.withLockedValue { $0 } >= 3, "the job did not go on after the stuck round")
        #expect(elapsed >= .milliseconds(300), "a round was abandoned before its deadline")
        let text = metrics.exposition()
        #expect(text.contains(#"yona_background_job_failures_total{job="stuck-once"} 1"#), "\(text)")
    }

    @Test func aRoundWithinItsDeadlineGivesItsResultAndItsError() async throws {
        struct Refused: Error {}
        #expect(try await Abandoning.after(.seconds(5)) { 42 } == 42)
        await #expect(throws: Refused.self) { try await Abandoning.after(.seconds(5)) { () async throws -> Int in throw Refused() } }
        await #expect(throws: Abandoning.DeadlineExceeded.self) {
            try await Abandoning.after(.milliseconds(50)) { () async throws -> Int in
                try await Task.sleep(for: .seconds(30))
                return 0
            }
        }
    }
}
