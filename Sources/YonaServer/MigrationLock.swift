import Fluent
import FluentPostgresDriver
import Foundation
import PostgresKit
import Vapor

extension Application {
    /// An arbitrary, fixed key for the session advisory lock that serializes migrations on PostgreSQL.
    static let migrationLockKey: Int64 = 0x59_6F_6E_61_4D_69_67 // "YonaMig"

    /// Runs `body` (applying migrations) alone: on PostgreSQL under a session advisory lock held on one connection, so
    /// instances that start at once on one database take turns instead of racing to create the same tables (the
    /// later ones then find nothing to do). SQLite is one file of one process: nothing to serialize.
    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let postgres = db as? any PostgresDatabase else { return try await body() }
        let logger = self.logger
        return try await postgres.withConnection { connection in
            connection.eventLoop.makeFutureWithTask {
                _ = try await connection.query("SELECT pg_advisory_lock(\(Self.migrationLockKey))", logger: logger)
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLockKey))", logger: logger)
                return try result.get()
            }
        }.get()
    }
}
