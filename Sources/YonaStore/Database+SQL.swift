import FluentKit
import Foundation
import SQLKit

extension Database {
    /// Both drivers Yona runs on (SQLite, PostgreSQL) are SQL databases; raw SQL is kept to what the schema
    /// builder cannot say (atomic counters, upserts, `SKIP LOCKED` claims).
    package var sql: any SQLDatabase {
        guard let sql = self as? any SQLDatabase else { fatalError("Yona needs an SQL database") }
        return sql
    }
}

extension Database {
    /// Makes the rest of this transaction the only one working on one anonymized user's rows: a row lock on
    /// PostgreSQL, so it holds across instances; on SQLite every write transaction of the process already
    /// runs alone (`SerializedWritesDatabase`).
    package func lockAnonymizedUser(_ userAnonymizedID: UUID) async throws {
        guard sql.dialect.name != "sqlite" else { return }
        try await sql.raw("SELECT id FROM users_anonymized WHERE id = \(bind: userAnonymizedID) FOR UPDATE").run()
    }
}
