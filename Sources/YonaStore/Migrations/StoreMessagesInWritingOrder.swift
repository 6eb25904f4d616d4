import FluentKit
import SQLKit

/// A goal conflict writes six messages at once, and a round of the analyzer writes those of about thirty conflicts in
/// one commit. Two things made every such message dirty pages all over the messages table and its indexes, which is
/// what SQLite's write-ahead log and its checkpoints then wrote out (docs/performance.md, "Messages in writing
/// order"):
/// - on SQLite the random 53-bit message id (api.md: ids reveal no count or order) was the table's rowid, so each new
///   message landed on a random page of the table, and each index entry, which ends in the rowid, on a random page of
///   its key's range. The id becomes an ordinary primary-key column with its own index; the rowid SQLite assigns
///   grows with every insert, so the table and the key ranges of every other index are appended to. (PostgreSQL's
///   heap is in writing order already.)
/// - the indexes on relations most messages do not have (the reply, the goal, the announcement, the other copy) held
///   an entry for every message. They hold only the messages that have the relation now; every query on them asks
///   for a value, which implies it is not null, so both stores still use them.
package struct StoreMessagesInWritingOrder: AsyncMigration {
    static let rowidKey = #""id" INTEGER PRIMARY KEY"#
    static let columnKey = #""id" BIGINT NOT NULL PRIMARY KEY"#
    static let relations = [
        "replied_message_id": "messages_replied", "goal_id": "messages_goal",
        "announcement_id": "messages_announcement", "origin_message_id": "messages_origin",
    ]

    package func prepare(on database: any Database) async throws {
        try await database.transaction { tx in
            if tx.sql.dialect.name == "sqlite" {
                // In writing order as far as it is known: the rowids the new table assigns follow the creation time.
                try await SQLiteTableRebuild.rebuild(
                    "messages", replacing: Self.rowidKey, with: Self.columnKey, orderedBy: "creation_time", on: tx.sql)
            }
            try await Self.indexRelations(on: tx.sql, partial: true)
        }
    }

    package func revert(on database: any Database) async throws {
        try await database.transaction { tx in
            if tx.sql.dialect.name == "sqlite" {
                try await SQLiteTableRebuild.rebuild("messages", replacing: Self.columnKey, with: Self.rowidKey, on: tx.sql)
            }
            try await Self.indexRelations(on: tx.sql, partial: false)
        }
    }

    private static func indexRelations(on sql: any SQLDatabase, partial: Bool) async throws {
        for (column, index) in relations.sorted(by: { $0.key < $1.key }) {
            try await sql.raw("DROP INDEX \(ident: index)").run()
            let condition = partial ? " WHERE \(column) IS NOT NULL" : ""
            try await sql.raw("CREATE INDEX \(ident: index) ON messages (\(ident: column))\(unsafeRaw: condition)").run()
        }
    }
}
