import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// Fixed-window counters in the database, so a limit holds across every instance sharing it.
/// Buckets are stored as hashes keyed with a server secret: the table never holds a mobile number or a client
/// address, and a dump cannot be checked against a list of numbers.
package struct RateLimiter: Sendable {
    package struct Limit: Sendable {
        package let name: String
        package let max: Int
        package let window: Int

        package init(name: String, max: Int, window: Int) {
            self.name = name
            self.max = max
            self.window = window
        }
    }

    package let db: any Database
    package let key: [UInt8]

    /// Counts one attempt in each limit's bucket and refuses with 429 and `Retry-After` when any is exceeded.
    package func hit(_ limits: [(Limit, String)], now: Date = Date()) async throws {
        for (limit, subject) in limits {
            let (allowed, retryAfter) = try await count(limit, subject, now: now)
            if !allowed { throw YonaError(.tooManyRequests, retryAfterSeconds: retryAfter) }
        }
    }

    /// Counts one use of `subject` under `limit`; false once the window's allowance is used up.
    package func allows(_ limit: Limit, _ subject: String, now: Date = Date()) async throws -> Bool {
        try await count(limit, subject, now: now).allowed
    }

    private func count(_ limit: Limit, _ subject: String, now: Date) async throws -> (allowed: Bool, retryAfter: Int) {
        let seconds = Int64(now.timeIntervalSince1970)
        let windowStart = seconds - seconds % Int64(limit.window)
        let row = try await db.sql.raw(
            """
            INSERT INTO rate_limit_counters (id, bucket, window_start, count)
            VALUES (\(bind: UUID()), \(bind: Self.bucket(limit.name, subject, key: key)), \(bind: windowStart), 1)
            ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
            RETURNING count
            """
        ).first()
        if Int.random(in: 0..<200) == 0 { try await purge(before: now.addingTimeInterval(-86_400)) }
        let count = try row?.decode(column: "count", as: Int.self) ?? 1
        return (count <= limit.max, Int(windowStart + Int64(limit.window) - seconds))
    }

    /// Drops windows that can no longer matter.
    package func purge(before: Date) async throws {
        try await db.sql.raw("DELETE FROM rate_limit_counters WHERE window_start < \(bind: Int64(before.timeIntervalSince1970))").run()
    }

    package static func bucket(_ name: String, _ subject: String, key: [UInt8]) -> String {
        let digest = KeyedHash.hash(Array("\(name)\u{0}\(subject)".utf8), key: key, outputLength: 16)
        return name + ":" + Hex.lowercase(digest)
    }

    package init(db: any Database, key: [UInt8]) {
        self.db = db
        self.key = key
    }
}
