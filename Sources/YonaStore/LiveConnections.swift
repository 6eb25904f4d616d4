import FluentKit
import FluentPostgresDriver
import Foundation
import NIOCore
import SQLKit

/// PostgresNIO (1.33.2, and its main branch as of 2026-11) hands a statement to its connection's channel without a
/// promise for the write: a statement issued after the connection has closed and its channel handlers are gone is
/// dropped on the floor, and its result never comes — no error, no timeout. That is what a transaction does when
/// PostgreSQL goes away under it: the statement in flight fails, the body throws, and Fluent's `ROLLBACK` is sent on
/// the dead connection and waits forever, keeping its pool lease; the pool (8 per event loop) runs dry after a few
/// outages (issue 36, `DeadConnectionTests` shows it without this wrapper).
///
/// Through this wrapper every statement on a leased PostgreSQL connection is issued on the connection's event loop,
/// after checking that the connection is still open: there the check and the write cannot be separated by the
/// channel closing, so a statement either reaches the connection's handler (which fails it if the connection dies
/// later) or fails at once with `ChannelError.ioOnClosedChannel` (503 with `Retry-After`, as any lost connection).
/// Transactions are run here too (`BEGIN`, the body, `COMMIT` or `ROLLBACK`, each guarded), since Fluent's own
/// send theirs past any wrapper; a failed `ROLLBACK` on a connection still open closes it, so no connection goes back
/// to the pool inside an aborted transaction.
///
/// A statement through the pool (outside `withConnection` and transactions) needs no guard: the pool checks the
/// connection and the statement is written in the same callback on the connection's event loop.
package struct LiveConnectionsConfiguration: DatabaseConfiguration {
    package var base: any DatabaseConfiguration

    package var middleware: [any AnyModelMiddleware] {
        get { base.middleware }
        set { base.middleware = newValue }
    }

    package func makeDriver(for databases: Databases) -> any DatabaseDriver {
        Driver(base: base.makeDriver(for: databases))
    }

    private struct Driver: DatabaseDriver {
        let base: any DatabaseDriver

        func makeDatabase(with context: DatabaseContext) -> any Database {
            LiveConnectionDatabase(base: base.makeDatabase(with: context), connection: nil)
        }

        func shutdown() { base.shutdown() }
        func shutdownAsync() async { await base.shutdownAsync() }
    }
}

extension DatabaseConfigurationFactory {
    /// PostgreSQL at `configuration`, with statements on dead connections failing instead of waiting forever.
    package static func livePostgres(
        configuration: SQLPostgresConfiguration, maxConnectionsPerEventLoop: Int, connectionPoolTimeout: TimeAmount
    ) -> DatabaseConfigurationFactory {
        DatabaseConfigurationFactory {
            LiveConnectionsConfiguration(
                base: DatabaseConfigurationFactory.postgres(
                    configuration: configuration, maxConnectionsPerEventLoop: maxConnectionsPerEventLoop,
                    connectionPoolTimeout: connectionPoolTimeout
                ).make())
        }
    }
}

/// The pool's handle (`connection` nil) or a leased connection's (see `LiveConnectionsConfiguration`).
package struct LiveConnectionDatabase: DatabaseWrapper, PostgresDatabase {
    package let base: any Database
    /// The leased connection every statement of this handle goes to; nil for the pool's handle.
    let connection: PostgresConnection?

    // MARK: Database

    package func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        whileOpen { base.execute(query: query, onOutput: onOutput) }
    }

    package func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        whileOpen { base.execute(schema: schema) }
    }

    package func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        whileOpen { base.execute(enum: `enum`) }
    }

    package func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        // a leased connection's handle is already in its transaction (or its session) as Fluent's is
        guard !inTransaction else { return closure(self) }
        return leased { live in
            live.run("BEGIN").flatMap {
                closure(live).map { TransactionResult(value: $0) }
                    .flatMap { result in live.run("COMMIT").map { result } }
                    .flatMapError { error in live.rollBack(after: error) }
            }
        }.map { $0.value }
    }

    package func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        leased(closure)
    }

    // MARK: SQLDatabase

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        whileOpen { baseSQL.execute(sql: query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        // the future-returning form writes on the event loop it is called on; the async form would hop
        try await whileOpen { baseSQL.execute(sql: query, onRow) }.get()
    }

    // MARK: PostgresDatabase (the migration lock holds one connection for a session advisory lock)

    package func send(_ request: any PostgresRequest, logger: Logger) -> EventLoopFuture<Void> {
        withConnection { (connection: PostgresConnection) in connection.send(request, logger: logger) }
    }

    package func withConnection<T>(_ closure: @escaping (PostgresConnection) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        if let connection { return closure(connection) }
        guard let postgres = base as? any PostgresDatabase else {
            return eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return postgres.withConnection(closure)
    }

    // MARK: -

    /// `body` with a handle on a connection leased from the pool (this handle's own when it is a leased one).
    private func leased<T>(_ body: @escaping @Sendable (LiveConnectionDatabase) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        base.withConnection { leased in
            guard let postgres = leased as? any PostgresDatabase else { return body(LiveConnectionDatabase(base: leased, connection: nil)) }
            // a leased connection's handle gives its connection back at once, without a pool
            return postgres.withConnection { connection in body(LiveConnectionDatabase(base: leased, connection: connection)) }
        }
    }

    private func run(_ sql: String) -> EventLoopFuture<Void> {
        execute(sql: SQLRaw(sql), { _ in })
    }

    /// `ROLLBACK` after the body failed with `error`, which is passed on; a connection that could not roll back is
    /// closed, so the pool never lends it again inside an aborted transaction.
    private func rollBack<T>(after error: any Error) -> EventLoopFuture<T> {
        run("ROLLBACK").flatMapErrorWithEventLoop { _, eventLoop in
            guard let connection, !connection.isClosed else { return eventLoop.makeSucceededVoidFuture() }
            return connection.close().recover { _ in }
        }.flatMapThrowing { throw error }
    }

    /// `statement` issued on the leased connection's event loop if the connection is open there, else a failure with
    /// `ChannelError.ioOnClosedChannel` (a statement written to a closed connection would never complete); through
    /// the pool's handle, `statement` as it is.
    private func whileOpen(_ statement: @escaping () -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        guard let connection else { return statement() }
        let loop = connection.eventLoop
        // `statement` is called on the event loop only, once
        let issue = UnsafeTransfer { connection.isClosed ? loop.makeFailedFuture(ChannelError.ioOnClosedChannel) : statement() }
        return loop.inEventLoop ? issue.value() : loop.flatSubmit { issue.value() }
    }
}

/// Moves a non-Sendable value to the event loop that alone uses it.
private struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
