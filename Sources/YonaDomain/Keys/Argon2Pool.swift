import Foundation
import NIOPosix
import YonaCrypto
import YonaObservability

/// Runs Argon2id on a NIO thread pool of its own, never on an event loop, with at most `maxConcurrent`
/// derivations at a time so that memory stays bounded (each one takes `limits.memLimit` bytes). Derivations for one
/// subject (an account, a number) run one at a time: a flood of parallel requests from one account queues behind
/// itself and leaves the pool to everyone else (issue 13, attack 7).
package final class Argon2Pool: Sendable {
    package let limits: PasswordHash.Limits
    private let threadPool: NIOThreadPool
    private let permits: AsyncSemaphore
    private let subjects = SubjectGate()

    private let metrics: YonaMetrics?

    package init(limits: PasswordHash.Limits, threadPool: NIOThreadPool, memoryBudget: Int = 512 * 1024 * 1024, metrics: YonaMetrics? = nil) {
        self.limits = limits
        self.threadPool = threadPool
        self.metrics = metrics
        self.permits = AsyncSemaphore(permits: max(1, memoryBudget / max(limits.memLimit, 1)))
    }

    package var maxConcurrent: Int { permits.capacity }

    package func deriveKey(password: [UInt8], salt: [UInt8], for subject: String) async throws -> SymmetricKey {
        await subjects.enter(subject)
        do {
            let key = try await derive(password: password, salt: salt)
            await subjects.leave(subject)
            return key
        } catch {
            await subjects.leave(subject)
            throw error
        }
    }

    private func derive(password: [UInt8], salt: [UInt8]) async throws -> SymmetricKey {
        try await permits.withPermit {
            let start = ContinuousClock.now
            defer { metrics?.keyDerivation(duration: ContinuousClock.now - start) }
            return try await threadPool.runIfActive { [limits] in
                try PasswordHash.deriveKey(password: password, salt: salt, limits: limits)
            }
        }
    }
}

/// One at a time per subject, in arrival order; subjects do not wait for each other.
package actor SubjectGate {
    private var busy: Set<String> = []
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    package func enter(_ subject: String) async {
        guard busy.contains(subject) else {
            busy.insert(subject)
            return
        }
        await withCheckedContinuation { waiting[subject, default: []].append($0) }
    }

    package func leave(_ subject: String) {
        guard var queue = waiting[subject], !queue.isEmpty else {
            busy.remove(subject)
            waiting[subject] = nil
            return
        }
        let next = queue.removeFirst()
        waiting[subject] = queue.isEmpty ? nil : queue
        next.resume()
    }
}
