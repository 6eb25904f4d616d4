import Fluent
import FluentPostgresDriver
import Foundation
import NIOCore
import SQLKit
import Testing
import Vapor

@testable import YonaConfig
@testable import YonaServer
@testable import YonaStore

/// issue 36: a statement sent on a PostgreSQL connection that died under it fails at once (PostgresNIO would drop it
/// and never answer), so a transaction whose connection dies gives its error back and its pool lease with it.
@Suite struct DeadConnectionTests {
    @Test(.enabled(if: TestDatabase.available.contains(.postgres), "needs PostgreSQL"))
    func transactionsWhoseConnectionDiesFailAtOnceAndTheirConnectionsGoBackToThePool() async throws {
        let admin = try #require(ProcessInfo.processInfo.environment["YONA_TEST_POSTGRES_URL"])
        let name = "yona_dead_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try PostgresAdmin.run(sql: "CREATE DATABASE \(name)", adminURL: admin)
        defer { try? PostgresAdmin.run(sql: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)", adminURL: admin) }
        let app = try await PostgresAdmin.commandApplication(on: PostgresAdmin.url(admin, database: name))
        do {
            try await Self.killConnectionsUnderTransactions(app, admin: admin)
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    private static func killConnectionsUnderTransactions(_ app: Application, admin: String) async throws {
        let db = app.db
        // more transactions than the pool has connections (8 per event loop), so leases that were kept would show
        let rounds = 8 * app.eventLoopGroup.makeIterator().reduce(0) { count, _ in count + 1 } + 4

        // act: in each transaction the connection's backend is terminated between two statements, as PostgreSQL
        // going away does; the second statement then goes to a dead connection, and the ROLLBACK after it too
        // (the deadline tells "never answers" from slow under a loaded test run: each round takes milliseconds alone)
        var outcomes: [String] = []
        for _ in 0..<rounds where outcomes.last != "never answered" {
            do {
                try await Abandoning.after(.seconds(60)) {
                    try await db.transaction { tx in
                        let sql = tx as! any SQLDatabase
                        let pid = try #require(try await sql.raw("SELECT pg_backend_pid() AS pid").first()?.decode(column: "pid", as: Int.self))
                        try await ExternalTool.detached { try PostgresAdmin.run(sql: "SELECT pg_terminate_backend(\(pid))", adminURL: admin) }
                        // the connection has seen its end (its handlers are gone) before the next statement
                        let patience = ContinuousClock.now + .seconds(30)
                        while try await connectionOpen(tx), ContinuousClock.now < patience { try await Task.sleep(for: .milliseconds(10)) }
                        try await sql.raw("SELECT 1").run()
                    }
                }
                outcomes.append("committed")
            } catch is Abandoning.DeadlineExceeded {
                outcomes.append("never answered")
            } catch let error as ChannelError where error == .ioOnClosedChannel {
                outcomes.append("closed")
            } catch {
                outcomes.append("other: \(String(reflecting: error))")
            }
        }

        // check: every transaction failed as a lost connection does (503), none hung, and the pool still serves
        #expect(outcomes == Array(repeating: "closed", count: rounds), "\(outcomes)")
        let alive = try await Abandoning.after(.seconds(60)) {
            try await db.transaction { tx in try await (tx as! any SQLDatabase).raw("SELECT 1 AS one").first()?.decode(column: "one", as: Int.self) }
        }
        #expect(alive == 1)
    }

    /// Whether the leased connection behind `tx` is still open.
    private static func connectionOpen(_ tx: any Database) async throws -> Bool {
        let postgres = try #require(tx as? any PostgresDatabase)
        return try await postgres.withConnection { connection in connection.eventLoop.makeSucceededFuture(!connection.isClosed) }.get()
    }
}
