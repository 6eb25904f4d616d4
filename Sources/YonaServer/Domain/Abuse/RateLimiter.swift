import Fluent
import Foundation
import SQLKit
import YonaCrypto

/// Fixed-window counters in the database, so a limit holds across every instance sharing it.
/// Buckets are stored as hashes: the table never holds a mobile number or a client address.
struct RateLimiter: Sendable {
    struct Limit: Sendable {
        let name: String
        let max: Int
        let window: Int
    }

    let db: any Database

    /// Counts one attempt in each limit's bucket and refuses with 429 and `Retry-After` when any is exceeded.
    func hit(_ limits: [(Limit, String)], now: Date = Date()) async throws {
        let sql = db.sql
        for (limit, subject) in limits {
            let seconds = Int64(now.timeIntervalSince1970)
            let windowStart = seconds - seconds % Int64(limit.window)
            let bucket = Self.bucket(limit.name, subject)
            let row = try await sql.raw("""
                INSERT INTO rate_limit_counters (id, bucket, window_start, count)
                VALUES (\(bind: UUID()), \(bind: bucket), \(bind: windowStart), 1)
                ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
                RETURNING count
                """).first()
            let count = try row?.decode(column: "count", as: Int.self) ?? 1
            if count > limit.max {
                throw YonaError(.tooManyRequests, retryAfterSeconds: Int(windowStart + Int64(limit.window) - seconds))
            }
        }
        if Int.random(in: 0..<200) == 0 { try await purge(before: now.addingTimeInterval(-86_400)) }
    }

    /// Drops windows that can no longer matter.
    func purge(before: Date) async throws {
        try await db.sql.raw("DELETE FROM rate_limit_counters WHERE window_start < \(bind: Int64(before.timeIntervalSince1970))").run()
    }

    static func bucket(_ name: String, _ subject: String) -> String {
        let digest = KeyedHash.hash(Array("\(name)\u{0}\(subject)".utf8), key: Array("yona/rate-limit/v1".utf8), outputLength: 16)
        return name + ":" + digest.map { String(format: "%02x", $0) }.joined()
    }
}
