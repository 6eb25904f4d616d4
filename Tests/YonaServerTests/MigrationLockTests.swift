import Fluent
import Foundation
import Testing
import Vapor

@testable import YonaConfig
@testable import YonaServer
@testable import YonaStore

/// issue 16: N instances can start at once on one fresh PostgreSQL; migrations take turns under an advisory lock.
@Suite struct MigrationLockTests {
    @Test func instancesStartingAtOnceOnAFreshPostgreSQLAllComeUp() async throws {
        guard let admin = ProcessInfo.processInfo.environment["YONA_TEST_POSTGRES_URL"] else {
            try #require(ProcessInfo.processInfo.environment["YONA_TEST_REQUIRE_POSTGRES"] != "1", "PostgreSQL is required")
            return
        }
        // setup: a fresh database and three applications on it, as three instances would be
        let name = "yona_lock_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try PostgresAdmin.run(sql: "CREATE DATABASE \(name)", adminURL: admin)
        defer { try? PostgresAdmin.run(sql: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)", adminURL: admin) }
        var apps: [Application] = []
        for _ in 0..<3 { apps.append(try await PostgresAdmin.commandApplication(on: PostgresAdmin.url(admin, database: name))) }

        // act: all migrate at the same moment
        let outcomes = await withTaskGroup(of: String?.self) { group in
            for app in apps {
                group.addTask {
                    do {
                        try await app.withMigrationLock { try await app.autoMigrate() }
                        return nil
                    } catch {
                        return String(reflecting: error)
                    }
                }
            }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }

        // check: every instance came up and each migration ran once
        #expect(outcomes.compactMap { $0 }.isEmpty, "\(outcomes)")
        let applied = try await apps[0].db.sql.raw("SELECT count(*) AS n FROM _fluent_migrations").first()?.decode(column: "n", as: Int.self)
        #expect(applied == YonaMigrations.count)
        for app in apps { try await app.asyncShutdown() }
    }
}
