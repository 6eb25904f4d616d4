import FluentKit
import NIOConcurrencyHelpers

/// Group commit: work that arrives while a round is being written waits for the next round, which takes all of it
/// at once (up to `maxRound` items) and writes it in one transaction. Under load a round costs one transaction, one
/// commit and one set of reads for many callers; when idle a caller's round holds only its own item and starts at
/// once. Each caller gets its own result after its round committed.
///
/// A round that fails as a whole (an error of the store) is retried item by item, each in a round of its own, so
/// one bad item fails only its caller; a round still running at `roundDeadline` fails all its callers at once. At most `concurrency` rounds run at once (1 on SQLite, whose writes are
/// serialized anyway).
package final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    package typealias Round = @Sendable ([Item], any Database) async throws -> [Result<Output, any Error>]

    private struct Waiter {
        package let item: Item
        package let continuation: CheckedContinuation<Output, any Error>
    }

    private struct State {
        package var waiting: [Waiter] = []
        package var running = 0
    }

    private let state = NIOLockedValueBox(State())
    private let round: Round
    package let maxRound: Int
    package let concurrency: Int
    /// How long a round may take before its callers get `Abandoning.DeadlineExceeded` (the pool's wait for a
    /// connection is 20 s; a round of the classifier's events takes milliseconds).
    package let roundDeadline: Duration
    private let observe: @Sendable (Int) -> Void

    /// `observe` is told each round's size.
    package init(
        maxRound: Int = 256, concurrency: Int = 1, roundDeadline: Duration = .seconds(25), observe: @escaping @Sendable (Int) -> Void = { _ in },
        round: @escaping Round
    ) {
        precondition(maxRound > 0 && concurrency > 0)
        self.roundDeadline = roundDeadline
        self.maxRound = maxRound
        self.concurrency = concurrency
        self.observe = observe
        self.round = round
    }

    /// Waits for `item`'s round (written through `db` if this call starts it) and returns the item's result.
    package func submit(_ item: Item, on db: any Database) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let starts = state.withLockedValue { state -> Bool in
                state.waiting.append(Waiter(item: item, continuation: continuation))
                guard state.running < concurrency else { return false }
                state.running += 1
                return true
            }
            if starts { Task { await self.drain(on: db) } }
        }
    }

    /// Runs rounds until nobody waits.
    private func drain(on db: any Database) async {
        while true {
            let taken = state.withLockedValue { state -> [Waiter] in
                let taken = Array(state.waiting.prefix(maxRound))
                state.waiting.removeFirst(taken.count)
                if taken.isEmpty { state.running -= 1 }
                return taken
            }
            guard !taken.isEmpty else { return }
            observe(taken.count)
            await run(taken, on: db)
        }
    }

    private func run(_ waiters: [Waiter], on db: any Database) async {
        do {
            // a round waiting on a database that stopped answering (its connections open) fails its callers at
            // the deadline, so later rounds are not stuck behind it (issue 36)
            let round = self.round
            let items = waiters.map(\.item)
            let results = try await Abandoning.after(roundDeadline) { try await round(items, db) }
            precondition(results.count == waiters.count, "a round answers each of its items")
            for (waiter, result) in zip(waiters, results) { waiter.continuation.resume(with: result) }
        } catch {
            // a stuck store fails the whole round: trying its items one by one would wait out the deadline for each
            guard waiters.count > 1, !(error is Abandoning.DeadlineExceeded) else {
                for waiter in waiters { waiter.continuation.resume(throwing: error) }
                return
            }
            for waiter in waiters { await run([waiter], on: db) }
        }
    }
}
