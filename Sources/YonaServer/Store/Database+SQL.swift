import Fluent
import Foundation
import SQLKit

extension Database {
    /// Both drivers Yona runs on (SQLite, PostgreSQL) are SQL databases; raw SQL is kept to what the schema
    /// builder cannot say (atomic counters, upserts, `SKIP LOCKED` claims).
    var sql: any SQLDatabase {
        guard let sql = self as? any SQLDatabase else { fatalError("Yona needs an SQL database") }
        return sql
    }
}
