import Foundation
import NIOPosix
import YonaCrypto

/// Runs Argon2id on a NIO thread pool of its own, never on an event loop, with at most `maxConcurrent`
/// derivations at a time so that memory stays bounded (each one takes `limits.memLimit` bytes).
final class Argon2Pool: Sendable {
    let limits: PasswordHash.Limits
    private let threadPool: NIOThreadPool
    private let permits: AsyncSemaphore

    private let metrics: YonaMetrics?

    init(limits: PasswordHash.Limits, threadPool: NIOThreadPool, memoryBudget: Int = 512 * 1024 * 1024, metrics: YonaMetrics? = nil) {
        self.limits = limits
        self.threadPool = threadPool
        self.metrics = metrics
        self.permits = AsyncSemaphore(permits: max(1, memoryBudget / max(limits.memLimit, 1)))
    }

    var maxConcurrent: Int { permits.capacity }

    func deriveKey(password: [UInt8], salt: [UInt8]) async throws -> SymmetricKey {
        try await permits.withPermit {
            let start = ContinuousClock.now
            defer { metrics?.keyDerivation(duration: ContinuousClock.now - start) }
            return try await threadPool.runIfActive { [limits] in
                try PasswordHash.deriveKey(password: password, salt: salt, limits: limits)
            }
        }
    }
}
