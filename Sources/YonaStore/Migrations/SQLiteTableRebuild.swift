import SQLKit

/// SQLite cannot change a column's constraints or a table's primary key in place: the table is rebuilt from its own
/// stored definition with one declaration replaced, its rows copied over (in `order`, when given, so new rowids
/// follow it) and its indexes and triggers made again (the copy itself fires none). Call it inside a transaction; no table may reference `table`.
enum SQLiteTableRebuild {
    static func rebuild(_ table: String, replacing old: String, with new: String, orderedBy order: String? = nil, on sql: any SQLDatabase)
        async throws
    {
        guard let stored = try await sql.raw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = \(bind: table)").first(),
            let definition = try stored.decode(column: "sql", as: String?.self), definition.contains(old)
        else { throw MigrationShapeError(table: table) }
        let dependents = try await sql.raw(
            "SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = \(bind: table) AND sql IS NOT NULL"
        ).all().map { try $0.decode(column: "sql", as: String.self) }
        let rebuilt = "\(table)_rebuilt"
        try await sql.raw(
            SQLQueryString(
                definition.replacingOccurrences(of: old, with: new)
                    .replacingOccurrences(of: "CREATE TABLE \"\(table)\"", with: "CREATE TABLE \"\(rebuilt)\""))
        ).run()
        let ordering = order.map { " ORDER BY \($0)" } ?? ""
        try await sql.raw("INSERT INTO \(ident: rebuilt) SELECT * FROM \(ident: table)\(unsafeRaw: ordering)").run()
        try await sql.raw("DROP TABLE \(ident: table)").run()
        try await sql.raw("ALTER TABLE \(ident: rebuilt) RENAME TO \(ident: table)").run()
        for dependent in dependents { try await sql.raw(SQLQueryString(dependent)).run() }
    }
}
