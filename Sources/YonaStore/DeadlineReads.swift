import FluentKit
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import SQLKit

/// A request's database handle whose reads have a deadline (issue 36): a read outside a transaction that has not
/// answered within `deadline` fails with `Abandoning.DeadlineExceeded` (503 with `Retry-After`), so no request
/// waits on a database that stopped answering without closing its connections (frozen, or a network that drops
/// packets; a connection that closed fails its statements at once, `LiveConnectionsConfiguration`). The read itself
/// is left to end, or not, on its connection.
///
/// Only reads: a write or a transaction that outlived a deadline may still commit, and answering 503 for it would
/// tell the client it did not happen. Writes batched by `GroupCommit` have their own deadline; transactions are
/// bounded by the pool and PostgreSQL. Commands (a database dump reads whole tables) and background jobs (whose
/// rounds have deadlines of their own) use the plain handle.
package struct DeadlineReads: DatabaseWrapper {
    package let base: any Database
    package let deadline: Duration

    package init(base: any Database, deadline: Duration) {
        self.base = base
        self.deadline = deadline
    }

    // MARK: Database

    package func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        let reads: Bool
        switch query.action {
        case .read, .aggregate: reads = true
        case .create, .update, .delete, .custom: reads = false
        }
        guard reads && !inTransaction else { return base.execute(query: query, onOutput: onOutput) }
        return bounded(base.execute(query: query, onOutput: onOutput))
    }

    package func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> { base.execute(schema: schema) }

    package func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> { base.execute(enum: `enum`) }

    package func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        base.transaction(closure)
    }

    package func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let deadline = deadline
        return base.withConnection { connection in closure(DeadlineReads(base: connection, deadline: deadline)) }
    }

    // MARK: SQLDatabase

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        guard reads(query) else { return baseSQL.execute(sql: query, onRow) }
        return bounded(baseSQL.execute(sql: query, onRow))
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        guard reads(query) else { return try await baseSQL.execute(sql: query, onRow) }
        try await bounded(baseSQL.execute(sql: query, onRow)).get()
    }

    // MARK: -

    /// A plain `SELECT` outside a transaction (`SELECT … FOR UPDATE` only runs inside one).
    private func reads(_ query: any SQLExpression) -> Bool {
        !inTransaction && isSelect(query)
    }

    /// `future`'s result, or `DeadlineExceeded` once the deadline has passed, whichever comes first.
    private func bounded(_ future: EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        // Whichever comes first settles the promise; the other finds it settled.
        let settled = NIOLockedValueBox(false)
        @Sendable func first() -> Bool {
            settled.withLockedValue { done in
                defer { done = true }
                return !done
            }
        }
        let deadline = deadline
        let (seconds, attoseconds) = deadline.components
        let timer = eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
            if first() { promise.fail(Abandoning.DeadlineExceeded(deadline: deadline)) }
        }
        future.whenComplete { result in
            timer.cancel()
            if first() { promise.completeWith(result) }
        }
        return promise.futureResult
    }
}
