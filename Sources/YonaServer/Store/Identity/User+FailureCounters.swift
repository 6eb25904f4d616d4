import Fluent
import Foundation
import SQLKit

extension User {
    /// The per-user counters of wrong guesses (SMS confirmation codes, lost-phone overwrite codes).
    enum FailureCounter: String {
        case confirmation = "confirmation_failed_attempts"
        case overwrite = "overwrite_failed_attempts"
        case pinReset = "pin_reset_failed_attempts"
    }

    /// Reserves one try before the code is compared: counts it unless the counter already reached `limit`, in one
    /// atomic statement, so neither parallel guesses nor a right code racing them get more tries than the limit.
    /// Returns the new count, or nil when no try is left. A right code then resets the counter.
    static func reserveAttempt(_ counter: FailureCounter, of userID: UUID, limit: Int, on db: any Database) async throws -> Int? {
        let row = try await db.sql.raw(
            """
            UPDATE users SET \(unsafeRaw: counter.rawValue) = \(unsafeRaw: counter.rawValue) + 1
            WHERE id = \(bind: userID) AND \(unsafeRaw: counter.rawValue) < \(bind: limit)
            RETURNING \(unsafeRaw: counter.rawValue)
            """
        ).first()
        return try row?.decode(column: counter.rawValue, as: Int.self)
    }
}
