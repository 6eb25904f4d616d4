import FluentKit
import Foundation
import SQLKit

/// A database handle that adds a rule around another (`SerializedWritesDatabase`, `DeadlineReads`): what it does not
/// change, it passes through to `base`.
package protocol DatabaseWrapper: Database, SQLDatabase {
    var base: any Database { get }
}

extension DatabaseWrapper {
    var baseSQL: any SQLDatabase { base.sql }

    package var context: DatabaseContext { base.context }
    package var inTransaction: Bool { base.inTransaction }
    package var logger: Logger { context.logger }
    package var eventLoop: any EventLoop { context.eventLoop }
    package var version: (any SQLDatabaseReportedVersion)? { baseSQL.version }
    package var dialect: any SQLDialect { baseSQL.dialect }
    package var queryLogLevel: Logger.Level? { baseSQL.queryLogLevel }

    /// Whether raw SQL is a plain `SELECT` (what both wrappers tell reads from writes by).
    func isSelect(_ query: any SQLExpression) -> Bool {
        serialize(query).sql.drop { $0.isWhitespace }.prefix(6).uppercased() == "SELECT"
    }
}

/// A transaction's result carried through futures and tasks that want Sendable values (Fluent's `transaction`
/// requirement predates Sendable and leaves its result unconstrained); it is only ever read by the one caller.
struct TransactionResult<T>: @unchecked Sendable {
    let value: T
}
