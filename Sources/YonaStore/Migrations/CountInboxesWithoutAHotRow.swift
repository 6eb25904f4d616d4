import FluentKit
import SQLKit

/// The inbox page's `totalElements` (Yona's page object, which the apps read) was a count over the inbox's index
/// entries: an inbox of 100,000 messages made every page ~6× slower than one of 100 (docs/performance.md, "An inbox
/// count without a hot row"). The count is kept instead, without a counter row that every writer to an inbox would
/// have to lock:
/// - `inbox_count_changes`: every insert, delete or read-flag change of a listed message (not a sender's own copy,
///   not a copy of an announcement) appends `(inbox, ±1 listed, ±1 unread)`, written by triggers on `messages` in the
///   writer's transaction. Insert-only: two transactions writing to one inbox never wait for each other.
/// - `inbox_counts`: one row per inbox, the changes folded so far (`InboxCounts.fold`, a background job).
/// A page's count is its inbox's row plus its few unfolded changes plus its live announcement copies, counted through
/// `messages_announcement`, which now holds the inbox after the announcement. Neither table has a time column.
package struct CountInboxesWithoutAHotRow: AsyncMigration {
    /// A change is counted when a row starts or stops being a listed message, or its read flag changes.
    static let listed = "NOT %.is_sent_item AND %.announcement_id IS NULL"

    package func prepare(on database: any Database) async throws {
        try await database.transaction { tx in
            let sql = tx.sql
            let sqlite = sql.dialect.name == "sqlite"
            let key = sqlite ? "id INTEGER PRIMARY KEY" : "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
            try await sql.raw(
                """
                CREATE TABLE inbox_count_changes (\(unsafeRaw: key), user_anonymized_id UUID NOT NULL, \
                listed INTEGER NOT NULL, unread INTEGER NOT NULL)
                """
            ).run()
            try await sql.raw("CREATE INDEX inbox_count_changes_inbox ON inbox_count_changes (user_anonymized_id, listed, unread)").run()
            try await sql.raw(
                "CREATE TABLE inbox_counts (user_anonymized_id UUID NOT NULL PRIMARY KEY, listed BIGINT NOT NULL, unread BIGINT NOT NULL)"
            ).run()
            // First the triggers (on PostgreSQL they lock out writers to `messages` until this commits), then the
            // counts of what is stored: no message is counted twice or missed.
            if sqlite { try await Self.createSQLiteTriggers(on: sql) } else { try await Self.createPostgresTriggers(on: sql) }
            try await sql.raw(
                """
                INSERT INTO inbox_counts (user_anonymized_id, listed, unread)
                SELECT user_anonymized_id, COUNT(*), SUM(CASE WHEN is_read THEN 0 ELSE 1 END) FROM messages
                WHERE \(unsafeRaw: Self.listed.replacingOccurrences(of: "%.", with: "")) GROUP BY user_anonymized_id
                """
            ).run()
            try await sql.raw("DROP INDEX messages_announcement").run()
            try await sql.raw(
                "CREATE INDEX messages_announcement ON messages (announcement_id, user_anonymized_id) WHERE announcement_id IS NOT NULL"
            ).run()
        }
    }

    package func revert(on database: any Database) async throws {
        try await database.transaction { tx in
            let sql = tx.sql
            if sql.dialect.name == "sqlite" {
                for trigger in ["messages_counted_insert", "messages_counted_delete", "messages_counted_update"] {
                    try await sql.raw("DROP TRIGGER \(ident: trigger)").run()
                }
            } else {
                try await sql.raw("DROP FUNCTION count_inbox_change() CASCADE").run()
            }
            try await sql.raw("DROP TABLE inbox_counts").run()
            try await sql.raw("DROP TABLE inbox_count_changes").run()
            try await sql.raw("DROP INDEX messages_announcement").run()
            try await sql.raw("CREATE INDEX messages_announcement ON messages (announcement_id) WHERE announcement_id IS NOT NULL").run()
        }
    }

    /// The row `side` (`NEW` or `OLD`) as a change of `sign` (1 or -1), when it is a listed message.
    private static func change(_ side: String, _ sign: String) -> String {
        """
        INSERT INTO inbox_count_changes (user_anonymized_id, listed, unread) \
        SELECT \(side).user_anonymized_id, \(sign), CASE WHEN \(side).is_read THEN 0 ELSE \(sign) END \
        WHERE \(listed.replacingOccurrences(of: "%", with: side))
        """
    }

    /// Whether an update can change what a row counts for.
    private static let countedColumnsChange = """
        OLD.is_read IS NOT NEW.is_read OR OLD.is_sent_item IS NOT NEW.is_sent_item \
        OR OLD.announcement_id IS NOT NEW.announcement_id OR OLD.user_anonymized_id IS NOT NEW.user_anonymized_id
        """

    static let countedColumns = "is_read, is_sent_item, announcement_id, user_anonymized_id"

    private static func createSQLiteTriggers(on sql: any SQLDatabase) async throws {
        try await run(
            """
                CREATE TRIGGER messages_counted_insert AFTER INSERT ON messages
                WHEN \(listed.replacingOccurrences(of: "%", with: "NEW")) BEGIN \(change("NEW", "1")); END
            """, on: sql)
        try await run(
            """
                CREATE TRIGGER messages_counted_delete AFTER DELETE ON messages
                WHEN \(listed.replacingOccurrences(of: "%", with: "OLD")) BEGIN \(change("OLD", "-1")); END
            """, on: sql)
        try await run(
            """
                CREATE TRIGGER messages_counted_update AFTER UPDATE OF \(countedColumns) ON messages
                WHEN \(countedColumnsChange) BEGIN \(change("OLD", "-1")); \(change("NEW", "1")); END
            """, on: sql)
    }

    private static func createPostgresTriggers(on sql: any SQLDatabase) async throws {
        try await run(
            """
                CREATE FUNCTION count_inbox_change() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP <> 'INSERT' THEN \(change("OLD", "-1")); END IF;
                    IF TG_OP <> 'DELETE' THEN \(change("NEW", "1")); END IF;
                    RETURN NULL;
                END $$
            """, on: sql)
        let distinct = countedColumnsChange.replacingOccurrences(of: "IS NOT", with: "IS DISTINCT FROM")
        for (name, event, condition) in [
            ("messages_counted_insert", "INSERT", listed.replacingOccurrences(of: "%", with: "NEW")),
            ("messages_counted_delete", "DELETE", listed.replacingOccurrences(of: "%", with: "OLD")),
            ("messages_counted_update", "UPDATE OF \(countedColumns)", distinct),
        ] {
            try await run(
                "CREATE TRIGGER \(name) AFTER \(event) ON messages FOR EACH ROW WHEN (\(condition)) EXECUTE FUNCTION count_inbox_change()",
                on: sql)
        }
    }

    /// A statement put together from this migration's own constants (no input reaches it).
    private static func run(_ statement: String, on sql: any SQLDatabase) async throws {
        try await sql.raw(SQLQueryString(statement)).run()
    }
}
