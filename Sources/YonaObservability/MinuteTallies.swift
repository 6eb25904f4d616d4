import FluentKit
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import YonaStore

/// What this process delivered, per minute and kind, until `flush` adds it to `delivery_minutes`, where every
/// instance's counts meet (the console's charts). Counting is a dictionary update under a lock; the database sees
/// one upsert per kind and minute, not one per delivery.
package final class MinuteTallies: Sendable {
    private struct Key: Hashable {
        let minute: Int64
        let series: String
    }

    private let counts = NIOLockedValueBox<[Key: Int]>([:])

    package init() {}

    package static func minute(of date: Date) -> Int64 { Int64(date.timeIntervalSince1970 / 60) }

    package func add(_ series: String, _ count: Int = 1, now: Date = Date()) {
        guard count > 0 else { return }
        counts.withLockedValue { $0[Key(minute: Self.minute(of: now), series: series), default: 0] += count }
    }

    /// Adds what was counted since the last flush to the table; on failure the counts are kept for the next one.
    package func flush(on db: any Database, now: Date = Date()) async throws {
        let taken = counts.withLockedValue { counts in
            defer { counts = [:] }
            return counts
        }
        guard !taken.isEmpty else { return }
        do {
            for (key, count) in taken {
                try await db.sql.raw(
                    """
                    INSERT INTO \(unsafeRaw: DeliveryMinute.schema) (id, minute, series, count)
                    VALUES (\(bind: UUID()), \(bind: key.minute), \(bind: key.series), \(bind: count))
                    ON CONFLICT (minute, series) DO UPDATE SET count = \(unsafeRaw: DeliveryMinute.schema).count + excluded.count
                    """
                ).run()
            }
        } catch {
            counts.withLockedValue { counts in counts.merge(taken, uniquingKeysWith: +) }
            throw error
        }
        try await DeliveryMinute.query(on: db).filter(\.$minute < Self.minute(of: now) - 2 * 24 * 60).delete()
    }

    /// Every kind's count per minute over the `minutes` before `now` (oldest first), from every instance.
    package static func history(on db: any Database, minutes: Int = 60, now: Date = Date()) async throws -> [String: [Int]] {
        let last = minute(of: now)
        let first = last - Int64(minutes) + 1
        var history: [String: [Int]] = [:]
        for row in try await DeliveryMinute.query(on: db).filter(\.$minute >= first).filter(\.$minute <= last).all() {
            history[row.series, default: Array(repeating: 0, count: minutes)][Int(row.minute - first)] += row.count
        }
        return history
    }
}
