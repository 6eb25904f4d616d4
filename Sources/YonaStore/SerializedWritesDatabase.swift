import FluentKit
import FluentSQLiteDriver
import Foundation
import NIOConcurrencyHelpers
import SQLKit

/// SQLite has one writer at a time, and it refuses (rather than waits for) a transaction that has read and
/// then wants to write while another connection writes. Through this wrapper every write of the process —
/// each transaction as a whole, each write statement outside one — takes one asynchronous lock first, so
/// writers queue without holding a thread and never collide; reads go straight through and, in WAL mode,
/// never wait for a writer. PostgreSQL does not need it.
package struct SerializedWritesConfiguration: DatabaseConfiguration {
    package var base: any DatabaseConfiguration
    package let writer = WriterLock()

    package var middleware: [any AnyModelMiddleware] {
        get { base.middleware }
        set { base.middleware = newValue }
    }

    package func makeDriver(for databases: Databases) -> any DatabaseDriver {
        Driver(base: base.makeDriver(for: databases), writer: writer)
    }

    private struct Driver: DatabaseDriver {
        package let base: any DatabaseDriver
        package let writer: WriterLock

        package func makeDatabase(with context: DatabaseContext) -> any Database {
            SerializedWritesDatabase(base: base.makeDatabase(with: context), writer: writer)
        }

        package func shutdown() { base.shutdown() }
        package func shutdownAsync() async { await base.shutdownAsync() }
    }
}

extension DatabaseConfigurationFactory {
    /// The SQLite file at `path`, in WAL mode (see `enableWriteAheadLog`), with its writes serialized.
    package static func serializedSQLite(path: String) -> DatabaseConfigurationFactory {
        DatabaseConfigurationFactory { SerializedWritesConfiguration(base: DatabaseConfigurationFactory.sqlite(.file(path)).make()) }
    }
}

extension Database {
    /// Readers then never wait for the writer, nor the writer for readers. The mode is stored in the file.
    package func enableWriteAheadLog() async throws {
        try await sql.raw("PRAGMA journal_mode=WAL").run()
    }
}

package struct SerializedWritesDatabase: DatabaseWrapper {
    package let base: any Database
    package let writer: WriterLock

    // MARK: Database

    package func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        switch query.action {
        case .read, .aggregate:
            return base.execute(query: query, onOutput: onOutput)
        case .create, .update, .delete, .custom:
            return serialized { try await base.execute(query: query, onOutput: onOutput).get() }
        }
    }

    package func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        serialized { try await base.execute(schema: schema).get() }
    }

    package func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        serialized { try await base.execute(enum: `enum`).get() }
    }

    /// The transaction holds the writer lock from `BEGIN` to `COMMIT`; its body works on the transaction's
    /// own connection and takes no further lock.
    package func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard !inTransaction else { return base.transaction(closure) }
        // The body runs in tasks the driver starts from its connection pool's callback, which do not inherit
        // the caller's task-local values: it is bound to them again here, so a nested write is recognised.
        // (Fluent's async API only passes Sendable results; this older requirement is unconstrained.)
        let base = base
        let writer = writer
        return eventLoop.makeFutureWithTask {
            try await writer.withLock { token in
                try await base.transaction { tx in WriterLock.bind(token) { closure(tx) } }.map { TransactionResult(value: $0) }.get()
            }
        }.map { $0.value }
    }

    package func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let writer = writer
        return base.withConnection { connection in closure(SerializedWritesDatabase(base: connection, writer: writer)) }
    }

    // MARK: SQLDatabase

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        guard writes(query) else { return baseSQL.execute(sql: query, onRow) }
        return serialized { try await baseSQL.execute(sql: query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        guard writes(query) else { return try await baseSQL.execute(sql: query, onRow) }
        try await writer.withLock { _ in try await baseSQL.execute(sql: query, onRow) }
    }

    // MARK: -

    /// Raw SQL is a write unless it is a plain `SELECT`.
    private func writes(_ query: any SQLExpression) -> Bool {
        !inTransaction && !isSelect(query)
    }

    private func serialized<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> EventLoopFuture<T> {
        let writer = writer
        return eventLoop.makeFutureWithTask { try await writer.withLock { _ in try await body() } }
    }
}

/// A fair, asynchronous mutual-exclusion lock that knows which task holds it: a task that already holds it
/// and asks again (a write through the outer database handle inside a transaction) gets an error instead of
/// waiting for itself forever.
package final class WriterLock: Sendable {
    package struct HeldByThisTask: Error, CustomStringConvertible {
        package var description: String { "a write outside the open transaction's handle would wait for that transaction" }
    }

    @TaskLocal private static var heldToken: UInt64?

    private struct State {
        package var holder: UInt64?
        package var nextToken: UInt64 = 1
        package var waiters: [(token: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = NIOLockedValueBox(State())

    /// Runs `body` holding the lock; `body` gets the holder's token, for `bind`.
    package func withLock<T: Sendable>(_ body: (UInt64) async throws -> T) async throws -> T {
        if let mine = Self.heldToken, state.withLockedValue({ $0.holder == mine }) { throw HeldByThisTask() }
        let token = await acquire()
        defer { release() }
        return try await Self.$heldToken.withValue(token) { try await body(token) }
    }

    /// Marks the tasks `operation` starts as working for the holder of `token`.
    package static func bind<T>(_ token: UInt64, _ operation: () -> T) -> T {
        $heldToken.withValue(token, operation: operation)
    }

    private func acquire() async -> UInt64 {
        let token = state.withLockedValue { s -> UInt64 in
            defer { s.nextToken += 1 }
            return s.nextToken
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLockedValue { s -> Bool in
                if s.holder == nil {
                    s.holder = token
                    return true
                }
                s.waiters.append((token, continuation))
                return false
            }
            if granted { continuation.resume() }
        }
        return token
    }

    private func release() {
        let next = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
            guard !s.waiters.isEmpty else {
                s.holder = nil
                return nil
            }
            let next = s.waiters.removeFirst()
            s.holder = next.token
            return next.continuation
        }
        next?.resume()
    }
}
