import Fluent
import Foundation
import SQLKit

extension User {
    /// The per-user counters of wrong guesses (SMS confirmation codes, lost-phone overwrite codes).
    enum FailureCounter: String {
        case confirmation = "confirmation_failed_attempts"
        case overwrite = "overwrite_failed_attempts"
    }

    /// Adds one failure unless the counter already reached `limit`, in one atomic statement, so parallel
    /// guesses cannot get more tries than the limit. Returns the new count, or nil when it was at the limit.
    static func recordFailure(_ counter: FailureCounter, of userID: UUID, limit: Int, on db: any Database) async throws -> Int? {
        let row = try await db.sql.raw("""
            UPDATE users SET \(unsafeRaw: counter.rawValue) = \(unsafeRaw: counter.rawValue) + 1
            WHERE id = \(bind: userID) AND \(unsafeRaw: counter.rawValue) < \(bind: limit)
            RETURNING \(unsafeRaw: counter.rawValue)
            """).first()
        return try row?.decode(column: counter.rawValue, as: Int.self)
    }
}
