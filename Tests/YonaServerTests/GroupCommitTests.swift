import FluentSQLiteDriver
import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// The group commit under the analyzer API: callers that arrive while a round runs share the next round, each gets
/// its own answer, and one caller's bad item never fails the others.
@Suite struct GroupCommitTests {
    /// Rounds as the commit ran them (the items of each).
    final class Log: Sendable {
        let rounds = NIOLockedValueBox<[[Int]]>([])
    }

    @Test func callersArrivingDuringARoundShareTheNextOneAndEachGetsItsOwnAnswer() async throws {
        try await withDatabase { db in
            let log = Log()
            let commit = GroupCommit<Int, Int>(maxRound: 100) { items, _ in
                log.rounds.withLockedValue { $0.append(items) }
                // The first round is slow, as a commit under load is: everyone else arrives meanwhile.
                if items == [0] { try await Task.sleep(for: .milliseconds(300)) }
                return items.map { .success($0 * 10) }
            }
            let first = Task { try await commit.submit(0, on: db) }
            try await Task.sleep(for: .milliseconds(100))
            let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for item in 1...40 { group.addTask { (item, try await commit.submit(item, on: db)) } }
                return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
            }
            #expect(try await first.value == 0)
            #expect(answers.count == 40)
            #expect(answers.allSatisfy { $0.value == $0.key * 10 })
            let rounds = log.rounds.withLockedValue { $0 }
            #expect(rounds.first == [0])
            // All 40 waited behind the slow round and went in the next one (or, at worst, a few).
            #expect(rounds.count <= 3, "rounds: \(rounds.map(\.count))")
            #expect(rounds.flatMap { $0 }.sorted() == Array(0...40))
        }
    }

    @Test func aRoundThatFailsIsRetriedItemByItemSoOnlyTheBadItemFails() async throws {
        struct Broken: Error {}
        try await withDatabase { db in
            let log = Log()
            let commit = GroupCommit<Int, Int>(maxRound: 100) { items, _ in
                log.rounds.withLockedValue { $0.append(items) }
                if items == [0] { try await Task.sleep(for: .milliseconds(300)) }
                // Item 13 breaks any round it is in, as a constraint violation would.
                if items.contains(13) { throw Broken() }
                return items.map { .success($0) }
            }
            let first = Task { try await commit.submit(0, on: db) }
            try await Task.sleep(for: .milliseconds(100))
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for item in 1...20 { group.addTask { (item, (try? await commit.submit(item, on: db)) == item) } }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            _ = try await first.value
            #expect(outcomes.filter { !$0.value }.map(\.key) == [13])
            let rounds = log.rounds.withLockedValue { $0 }
            #expect(rounds.contains { $0.count > 1 && $0.contains(13) }, "the failing round held others too")
            #expect(rounds.contains([13]))
        }
    }

    /// A round waiting on a call that never completes (a connection that died under it, issue 36) fails its callers
    /// at the deadline, all at once, and the rounds after it go on.
    @Test func aStuckRoundFailsItsCallersAtTheDeadlineAndTheNextRoundsGoOn() async throws {
        try await withDatabase { db in
            let stuck = BackgroundJobTests.NeverCompletes()
            let commit = GroupCommit<Int, Int>(maxRound: 100, roundDeadline: .milliseconds(300)) { items, _ in
                if items.contains(0) { await stuck.wait() }
                return items.map { .success($0) }
            }
            let started = ContinuousClock.now
            let first = Task { try await commit.submit(0, on: db) }
            try await Task.sleep(for: .milliseconds(50))
            // callers arriving meanwhile wait for the next round (one round at a time), and get it after the deadline
            let behind = Task { try await (commit.submit(1, on: db), commit.submit(2, on: db)) }
            await #expect(throws: Abandoning.DeadlineExceeded.self) { try await first.value }
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            let answers = try await behind.value
            #expect(answers.0 == 1 && answers.1 == 2)
            #expect(try await commit.submit(7, on: db) == 7)
            stuck.release()
        }
    }

    @Test func nothingWaitsWhenIdle() async throws {
        try await withDatabase { db in
            let commit = GroupCommit<Int, Int>(maxRound: 8) { items, _ in items.map { .success($0 + 1) } }
            for item in 0..<5 {
                let answer = try await commit.submit(item, on: db)
                #expect(answer == item + 1)
            }
        }
    }

    private func withDatabase(_ body: (any Database) async throws -> Void) async throws {
        let app = try await Application.make(.testing)
        app.databases.use(.sqlite(.memory), as: .sqlite)
        do {
            try await body(app.db)
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }
}
