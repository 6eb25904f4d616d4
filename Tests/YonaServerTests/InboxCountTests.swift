import Fluent
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// The inbox page's `totalElements` is kept, not counted (docs/decisions.md "Inbox counts without a hot row"): triggers
/// append changes in each writer's transaction and a fold moves them into one count per inbox. Whatever runs at the same
/// time, the kept count must be what counting the inbox gives.
@Suite struct InboxCountTests {
    @Test(arguments: TestDatabase.available)
    func theKeptCountIsTheCountedInboxWhileConflictsDeletesMarksAndFoldsRunAtOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Robin (a phone on the VPN) shares with Bob and Carol: each of her conflicts is a message to her and
            // a copy to each of them; six conflicts stored, one announcement that stays and one that will expire
            let (robin, ua, index) = try await MessageStorageTests.robinWithAPhone(server)
            let bob = try await server.createUser(nickname: "Bob")
            let carol = try await server.createUser(nickname: "Carol")
            try await BuddyTests.connect(server, richard: robin, bob: bob)
            try await BuddyTests.connect(server, richard: robin, bob: carol)
            try await MessageStorageTests.conflicts(server, ua, index, hoursAgo: Array(40...45))
            #expect(try await AnnouncementTests.announce(server, expiresAt: nil).status == 202)
            #expect(try await AnnouncementTests.announce(server, expiresAt: Date().addingTimeInterval(3600)).status == 202)
            try await server.app.announcementFanOut.takeSnapshots()
            while try await server.app.announcementFanOut.runOnce(limit: 2) > 0 {}
            let people = [robin, bob, carol]
            try await Self.expectKeptCountsAreCounted(server, people)
            let stored = try await server.messages(robin).filter { $0["@type"] as? String == "GoalConflictMessage" }
            let links = try stored.map { try #require(value($0, "_links", "self", "href") as? String) }
            try #require(links.count == 6)

            // act, all at once: twenty new conflicts, folds of three changes at a time, Robin marking four of her
            // conflicts read (and one back), deleting two (which takes Bob's and Carol's copies along), and Bob
            // marking everything he has read
            let folding = ManagedAtomicFlag()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await MessageStorageTests.conflicts(server, ua, index, hoursAgo: Array(1...10))
                }
                group.addTask {
                    try await MessageStorageTests.conflicts(server, ua, index, hoursAgo: Array(11...20))
                }
                group.addTask {
                    while !folding.isSet {
                        try await InboxCounts.fold(on: server.app.db, limit: 3)
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                group.addTask {
                    for link in links[0..<4] { try await Self.post(server, robin, "\(link)/markRead") }
                    try await Self.post(server, robin, "\(links[0])/markUnread")
                }
                group.addTask {
                    for link in links[4..<6] {
                        let deleted = try await server.request(.DELETE, link, headers: robin.passwordHeader)
                        try #require(deleted.status == 200 || deleted.status == 204, "\(deleted.text)")
                    }
                }
                group.addTask {
                    for message in try await server.messages(bob) {
                        guard let link = value(message, "_links", "yona:markRead", "href") as? String else { continue }
                        // a copy of a conflict Robin is deleting at the same time may be gone already
                        let marked = try await server.request(.POST, link, headers: bob.passwordHeader, json: ["properties": [String: Any]()])
                        try #require(marked.status == 200 || marked.status == 404, "\(link): \(marked.text)")
                    }
                }
                try await group.next()
                try await group.next()
                try await group.next()
                try await group.next()
                try await group.next()
                folding.set()
                try await group.waitForAll()
            }

            // check: right with changes still unfolded, right once all are folded (and nothing is left to fold), right
            // once an announcement expired, and a vanished account leaves no count behind
            try await Self.expectKeptCountsAreCounted(server, people)
            while try await InboxCounts.fold(on: server.app.db, limit: 7) > 0 {}
            #expect(try await Self.scalar(server, "SELECT COUNT(*) AS n FROM inbox_count_changes") == 0)
            #expect(try await Self.scalar(server, "SELECT COUNT(*) AS n FROM inbox_counts WHERE listed = 0 AND unread = 0") == 0)
            try await Self.expectKeptCountsAreCounted(server, people)
            try await server.app.db.sql.raw(
                "UPDATE system_announcements SET expires_at = \(bind: Date().addingTimeInterval(-1)) WHERE expires_at IS NOT NULL"
            ).run()
            try await Self.expectKeptCountsAreCounted(server, people)
            let left = try await server.request(.DELETE, bob.path, headers: bob.passwordHeader)
            #expect(left.status == 200 || left.status == 204, "\(left.text)")
            while try await InboxCounts.fold(on: server.app.db) > 0 {}
            #expect(
                try await Self.scalar(
                    server, "SELECT COUNT(*) AS n FROM inbox_counts WHERE user_anonymized_id NOT IN (SELECT id FROM users_anonymized)") == 0)
            try await Self.expectKeptCountsAreCounted(server, [robin, carol])
        }
    }

    @Test(arguments: TestDatabase.available)
    func theMigrationCountsWhatIsStoredAndARebuiltTableKeepsCounting(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: the store as it was before inboxes were counted, with three conflicts, one of them read
            let (robin, ua, index) = try await MessageStorageTests.robinWithAPhone(server)
            let migration = CountInboxesWithoutAHotRow()
            try await migration.revert(on: server.app.db)
            try await MessageStorageTests.conflicts(server, ua, index, hoursAgo: [5, 4, 3])
            try await server.app.db.sql.raw("UPDATE messages SET is_read = \(bind: true) WHERE id = (SELECT MIN(id) FROM messages)").run()

            // act
            try await migration.prepare(on: server.app.db)

            // check: counted as stored; new messages count on, also after SQLite rebuilt the table (its triggers with it)
            try await Self.expectKeptCountsAreCounted(server, [robin])
            #expect(try await Self.page(server, robin, onlyUnread: true).total == 2)
            let rebuild = StoreMessagesInWritingOrder()
            try await rebuild.revert(on: server.app.db)
            try await rebuild.prepare(on: server.app.db)
            try await MessageStorageTests.conflicts(server, ua, index, hoursAgo: [2])
            try await Self.expectKeptCountsAreCounted(server, [robin])
            #expect(try await Self.page(server, robin, onlyUnread: false).total == 4)
        }
    }

    /// For each person and both pages (all, only unread): the page's `totalElements` is what counting the inbox gives,
    /// and the page (of 100, enough for all) lists that many.
    static func expectKeptCountsAreCounted(_ server: TestServer, _ people: [TestUser], sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        for person in people {
            let inbox = try await anonymizedID(server, person)
            for onlyUnread in [false, true] {
                let unread: SQLQueryString = onlyUnread ? "AND is_read = \(bind: false)" : ""
                let counted = try await scalar(
                    server,
                    """
                    SELECT COUNT(*) AS n FROM messages WHERE user_anonymized_id = \(bind: inbox) AND is_sent_item = \(bind: false)
                    \(unread)
                    AND (announcement_id IS NULL OR announcement_id NOT IN (
                        SELECT id FROM system_announcements WHERE expires_at <= \(bind: Date())))
                    """)
                let page = try await page(server, person, onlyUnread: onlyUnread)
                #expect(page.total == counted, "\(person.nickname), only unread: \(onlyUnread)", sourceLocation: sourceLocation)
                #expect(page.listed == counted, "\(person.nickname), only unread: \(onlyUnread)", sourceLocation: sourceLocation)
                // past the end: no row carries the count, which is read alone
                let past = try await Self.page(server, person, onlyUnread: onlyUnread, number: 1)
                #expect(past.total == counted && past.listed == 0, "\(person.nickname), page 1", sourceLocation: sourceLocation)
            }
        }
    }

    static func page(_ server: TestServer, _ person: TestUser, onlyUnread: Bool, number: Int = 0) async throws -> (total: Int, listed: Int) {
        let query = "?page=\(number)&size=100" + (onlyUnread ? "&onlyUnreadMessages=true" : "")
        let page = try await server.request(.GET, "\(person.path)/messages/\(query)", headers: person.passwordHeader)
        try #require(page.status == 200, "\(page.text)")
        let total = try #require(value(page.json, "page", "totalElements") as? Int)
        return (total, (value(page.json, "_embedded", "yona:messages") as? [Any])?.count ?? 0)
    }

    static func anonymizedID(_ server: TestServer, _ person: TestUser) async throws -> UUID {
        let db = server.app.db
        let users = UserService(db: db, sms: server.app.sms(on: db), recovery: server.app.yona.recovery, testServer: true)
        return try await users.unlock(userID: try #require(UUID(uuidString: person.id)), passwordHeader: person.password)
            .privateData.userAnonymizedID
    }

    static func scalar(_ server: TestServer, _ query: SQLQueryString) async throws -> Int {
        try #require(try await server.app.db.sql.raw(query).first()).decode(column: "n", as: Int.self)
    }

    static func post(_ server: TestServer, _ person: TestUser, _ link: String) async throws {
        let done = try await server.request(.POST, link, headers: person.passwordHeader, json: ["properties": [String: Any]()])
        try #require(done.status == 200, "\(link): \(done.text)")
    }
}

/// Set once by one task, read by another.
private final class ManagedAtomicFlag: Sendable {
    private let value = NIOLockedValueBox(false)
    var isSet: Bool { value.withLockedValue { $0 } }
    func set() { value.withLockedValue { $0 = true } }
}
