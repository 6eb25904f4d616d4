import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Testing
import YonaCrypto

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

@Suite struct KeyDerivationTests {
    @Test func semaphoreNeverAdmitsMoreThanItsPermits() async throws {
        // setup
        let semaphore = AsyncSemaphore(permits: 2)
        let counters = NIOLockedValueBox((inFlight: 0, peak: 0))
        // act
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await semaphore.withPermit {
                        counters.withLockedValue {
                            $0.inFlight += 1
                            $0.peak = max($0.peak, $0.inFlight)
                        }
                        try await Task.sleep(for: .milliseconds(5))
                        counters.withLockedValue { $0.inFlight -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        // check
        #expect(counters.withLockedValue { $0.peak } == 2)
        #expect(counters.withLockedValue { $0.inFlight } == 0)
    }

    @Test func poolDerivesTheSameKeyAsArgon2idAndBoundsConcurrencyByMemory() async throws {
        let threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        let limits = PasswordHash.Limits(opsLimit: 1, memLimit: 8 * 1024 * 1024)
        let pool = Argon2Pool(limits: limits, threadPool: threadPool, memoryBudget: 24 * 1024 * 1024)
        #expect(pool.maxConcurrent == 3)
        let salt = SecureRandom.bytes(PasswordHash.saltLength)
        let viaPool = try await pool.deriveKey(password: Array("Ab3dE9".utf8), salt: salt, for: "test")
        let direct = try PasswordHash.deriveKey(password: Array("Ab3dE9".utf8), salt: salt, limits: limits)
        let sealed = AEAD.seal([1, 2, 3], key: viaPool, associatedData: [])
        #expect(try AEAD.open(sealed, key: direct, associatedData: []) == [1, 2, 3])
        try await threadPool.shutdownGracefully()
    }

    /// issue 13, attack 7, as the attack: one account fires a dozen derivations at once (parallel new-device requests
    /// and invitations); another person's single one, asked for just after, must not queue behind them all.
    @Test func oneSubjectFloodingThePoolDoesNotStarveAnother() async throws {
        let threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        let pool = Argon2Pool(limits: .init(opsLimit: 2, memLimit: 16 * 1024 * 1024), threadPool: threadPool, memoryBudget: 1024 * 1024 * 1024)
        let finished = NIOLockedValueBox<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<12 {
                group.addTask {
                    _ = try await pool.deriveKey(
                        password: Array("flood\(index)".utf8), salt: SecureRandom.bytes(PasswordHash.saltLength), for: "account:attacker")
                    finished.withLockedValue { $0.append("attacker") }
                }
            }
            try await Task.sleep(for: .milliseconds(20))
            group.addTask {
                _ = try await pool.deriveKey(password: Array("mine".utf8), salt: SecureRandom.bytes(PasswordHash.saltLength), for: "account:victim")
                finished.withLockedValue { $0.append("victim") }
            }
            try await group.waitForAll()
        }
        let order = finished.withLockedValue { $0 }
        let place = try #require(order.firstIndex(of: "victim"))
        #expect(place <= 3, "the victim's derivation finished after \(place) of the attacker's 12")
        try await threadPool.shutdownGracefully()
    }
}
