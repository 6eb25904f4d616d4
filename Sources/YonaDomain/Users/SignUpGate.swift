import FluentKit
import Foundation
import Logging
import SQLKit
import YonaStore

/// Who may get an account, as Yona's `UserAddService` decides it: at most `maxUsers` accounts, and, when the
/// operator limits it, only white-listed numbers, for free sign-ups and for numbers a buddy invites alike or
/// separately. A lost-phone overwrite replaces an account and passes (Yona's does too).
package struct SignUpGate: Sendable {
    package enum Origin: Sendable {
        /// The app signs a number up itself.
        case free
        /// A buddy request names a number without an account.
        case invited
    }

    /// No cap when nil (Yona's default, 1,000,000, was one in name only).
    package var maxUsers: Int?
    package var whiteListFreeSignUp: Bool
    package var whiteListInvitedUsers: Bool

    package init(maxUsers: Int? = nil, whiteListFreeSignUp: Bool = false, whiteListInvitedUsers: Bool = false) {
        self.maxUsers = maxUsers
        self.whiteListFreeSignUp = whiteListFreeSignUp
        self.whiteListInvitedUsers = whiteListInvitedUsers
    }

    /// Within this many accounts of the cap each sign-up logs a warning (Yona: 100; a tenth of a smaller cap).
    package static func warningMargin(_ maxUsers: Int) -> Int { min(100, max(1, maxUsers / 10)) }

    /// Refuses `number` with Yona's codes, inside the transaction that makes the account, after its identity row
    /// is inserted (so a number that has an account is still `error.user.exists`, as Yona checks that first, and the
    /// count includes the new one). On PostgreSQL the cap is counted under a transaction-scoped advisory lock, so
    /// sign-ups racing for the last place get one account, not several; on SQLite write transactions already run one
    /// at a time (`SerializedWritesDatabase`).
    package func admit(_ number: MobileNumber, as origin: Origin, on tx: any Database) async throws {
        try await checkWhiteList(number, as: origin, on: tx)
        guard let maxUsers else { return }
        if tx.sql.dialect.name != "sqlite" {
            try await tx.sql.raw("SELECT pg_advisory_xact_lock(\(bind: Self.capLockKey))").run()
        }
        let users = try await User.query(on: tx).count()
        guard users <= maxUsers else { throw YonaError(.maximumNumberOfUsersReached) }
        if users > maxUsers - Self.warningMargin(maxUsers) {
            Self.logger.warning(
                "sign-up: nearing the maximum number of users",
                metadata: ["users": .stringConvertible(users), "maximum": .stringConvertible(maxUsers)])
        }
    }

    /// The white-list part alone, before the slow work of making an account (an invitation's key derivation).
    package func checkWhiteList(_ number: MobileNumber, as origin: Origin, on db: any Database) async throws {
        let limited = origin == .free ? whiteListFreeSignUp : whiteListInvitedUsers
        guard limited else { return }
        let listed = try await WhiteListedNumber.query(on: db).filter(\.$mobileNumber == number.value).count() > 0
        guard listed else { throw YonaError(.numberNotWhiteListed, quoting: number.value) }
    }

    /// One fixed key for `pg_advisory_xact_lock`: the letters "YonaCap".
    private static let capLockKey: Int64 = 0x59_6F_6E_61_43_61_70
    private static let logger = Logger(label: "yona.sign-up")
}

/// The white list itself: the operator's numbers, added, removed and listed through the admin API and console.
package struct WhiteList: Sendable {
    package let db: any Database

    package init(db: any Database) { self.db = db }

    /// Every number, in order.
    package func numbers() async throws -> [String] {
        try await WhiteListedNumber.query(on: db).sort(\.$mobileNumber).all().map(\.mobileNumber)
    }

    /// Adds a valid mobile number once; a second time is `error.number.already.white.listed`, as Yona's.
    package func add(_ raw: String) async throws {
        let number = try MobileNumber(raw)
        do {
            try await WhiteListedNumber(mobileNumber: number.value).create(on: db)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw YonaError(.numberAlreadyWhiteListed, quoting: number.value)
        }
    }

    /// Removes a number; one not on the list is `error.number.not.white.listed`. An account made while it was
    /// listed stays.
    package func remove(_ raw: String) async throws {
        // only valid numbers are ever added; anything else (a NUL, which PostgreSQL refuses in a query) is not looked up
        let number = try MobileNumber(raw)
        let rows = try await WhiteListedNumber.query(on: db).filter(\.$mobileNumber == number.value).all()
        guard !rows.isEmpty else { throw YonaError(.numberNotWhiteListed, quoting: number.value) }
        for row in rows { try await row.delete(on: db) }
    }
}
