import FluentKit
import Foundation
import SQLKit

extension User {
    /// The per-user counters of wrong guesses (SMS confirmation codes, lost-phone overwrite codes, PIN reset codes),
    /// each with the column of the code it guards.
    package enum FailureCounter: String {
        case confirmation = "confirmation_failed_attempts"
        case overwrite = "overwrite_failed_attempts"
        case pinReset = "pin_reset_failed_attempts"

        package var codeColumn: String {
            switch self {
            case .confirmation: "confirmation_code"
            case .overwrite: "overwrite_code_hash"
            case .pinReset: "pin_reset_code"
            }
        }
    }

    /// What reserving a try found.
    package enum AttemptReservation: Equatable {
        /// The try is counted; this is the count now.
        case reserved(Int)
        /// The counter already reached the limit.
        case exhausted
        /// The code that was read is no longer stored: a parallel try used it, or a new code replaced it.
        case codeGone
    }

    /// Reserves one try before the code is compared: counts it unless the counter already reached `limit`, and only
    /// while `code` (the stored value the caller read) is still the stored code, in one atomic statement. So neither
    /// parallel guesses nor a right code racing them get more tries than the limit, and a guess that read the code
    /// before a parallel right code confirmed (and reset the counter) is not compared with a code that is gone.
    package static func reserveAttempt(_ counter: FailureCounter, of userID: UUID, code: Data, limit: Int, on db: any Database) async throws
        -> AttemptReservation
    {
        let count = counter.rawValue
        let row = try await db.sql.raw(
            """
            UPDATE users SET \(unsafeRaw: count) = \(unsafeRaw: count) + 1
            WHERE id = \(bind: userID) AND \(unsafeRaw: counter.codeColumn) = \(bind: code) AND \(unsafeRaw: count) < \(bind: limit)
            RETURNING \(unsafeRaw: count)
            """
        ).first()
        if let row { return .reserved(try row.decode(column: count, as: Int.self)) }
        let stillStored = try await db.sql.raw(
            "SELECT id FROM users WHERE id = \(bind: userID) AND \(unsafeRaw: counter.codeColumn) = \(bind: code)"
        ).first()
        return stillStored == nil ? .codeGone : .exhausted
    }
}
