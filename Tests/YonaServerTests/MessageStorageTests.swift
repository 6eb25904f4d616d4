import Fluent
import Foundation
import SQLKit
import Testing

@testable import YonaAPI
@testable import YonaCrypto
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// How messages are stored (docs/performance.md, "Messages in writing order"): new messages are appended to the
/// table whatever their random id, the indexes on optional relations hold only the messages that have them, and
/// the migration that made it so keeps every stored message readable in both directions.
@Suite struct MessageStorageTests {
    @Test(arguments: TestDatabase.available)
    func messagesStayReadableThroughTheMigrationAndNewOnesAreAppended(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: three goal conflicts an hour apart, stored under the previous shape of the table
            let (user, ua, index) = try await Self.robinWithAPhone(server)
            let migration = StoreMessagesInWritingOrder()
            try await migration.revert(on: server.app.db)
            #expect(try await Self.partialIndexes(server).isEmpty)
            try await Self.conflicts(server, ua, index, hoursAgo: [5, 4, 3])
            let before = try await Self.inbox(server, user)
            try #require(before.count == 3)

            // act
            try await migration.prepare(on: server.app.db)

            // check: the same messages at the same links, in the same order
            #expect(try await Self.inbox(server, user) == before)
            #expect(try await Self.partialIndexes(server) == ["messages_announcement", "messages_goal", "messages_origin", "messages_replied"])
            try await Self.conflicts(server, ua, index, hoursAgo: [2])
            let after = try await Self.inbox(server, user)
            #expect(after.count == 4)
            #expect(Array(after.dropFirst()) == before)
            if db == .sqlite {
                // The id is no longer the rowid: rows follow their writing order, not their random ids.
                let rows = try await server.app.db.sql.raw("SELECT rowid AS place, id FROM messages ORDER BY creation_time").all()
                let places = try rows.map { try $0.decode(column: "place", as: Int64.self) }
                let ids = try rows.map { try $0.decode(column: "id", as: Int64.self) }
                #expect(places == places.sorted() && Set(places).count == places.count)
                #expect(places != ids)
            }
            // Deleting the goal's conflicts finds them through the goal's index (now partial): delete one by its link.
            let first = try #require(after.first)
            let deleted = try await server.request(.DELETE, first.link, headers: user.passwordHeader)
            #expect(deleted.status == 200 || deleted.status == 204, "\(deleted.text)")
            #expect(try await Self.inbox(server, user).count == 3)
        }
    }

    /// docs/performance.md "Messages opened once": the first listing stores each message again under the inbox's
    /// symmetric envelope; it opens only for its own message and inbox, and a sealed box is still read.
    @Test func anEnvelopeOpensOnlyForItsOwnMessageAndInbox() throws {
        let inbox = BoxKeyPair.generate()
        let key = MessageWriter.envelopeKey(of: inbox)
        func message(_ id: Int64) throws -> Message {
            let payload = MessagePayload(kind: .goalConflict, messageID: id, subjectUserAnonymizedID: UUID())
            let sealed = try SealedBox.seal(Array(try JSONEncoder().encode(payload)), to: inbox.publicKey)
            return Message(id: id, userAnonymizedID: UUID(), sealedPayload: Data(sealed), creationTime: Date())
        }
        let first = try message(41)
        let (payload, envelope) = try MessageWriter.open(first, with: inbox, envelopeKey: key)
        let stored = try #require(envelope)
        #expect(payload.messageID == 41 && stored.starts(with: Array("YE1".utf8)))
        // the envelope opens without the sealed box and makes no new one
        let rewrapped = Message(id: 41, userAnonymizedID: UUID(), sealedPayload: stored, creationTime: Date())
        let reopened = try MessageWriter.open(rewrapped, with: inbox, envelopeKey: key)
        #expect(reopened.payload == payload && reopened.envelope == nil)
        // under another message's id, or with another inbox's key, it opens as nothing
        let moved = Message(id: 42, userAnonymizedID: UUID(), sealedPayload: stored, creationTime: Date())
        #expect(throws: (any Error).self) { try MessageWriter.open(moved, with: inbox, envelopeKey: key) }
        let other = BoxKeyPair.generate()
        #expect(throws: (any Error).self) { try MessageWriter.open(rewrapped, with: other, envelopeKey: MessageWriter.envelopeKey(of: other)) }
        #expect(MessageWriter.envelopeKey(of: inbox).data == key.data, "derived, not random")
        #expect(key.data != inbox.secretKey.data)
    }

    @Test(arguments: TestDatabase.available)
    func theFirstListingStoresEnvelopesAndEverythingStillReads(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: three conflicts, stored as sealed boxes
            let (user, ua, index) = try await Self.robinWithAPhone(server)
            try await Self.conflicts(server, ua, index, hoursAgo: [5, 4, 3])
            func stored() async throws -> [Data] {
                try await server.app.db.sql.raw("SELECT sealed_payload FROM messages ORDER BY id").all()
                    .map { try $0.decode(column: "sealed_payload", as: Data.self) }
            }
            #expect(try await stored().allSatisfy { !$0.starts(with: Array("YE1".utf8)) })

            // act
            let first = try await Self.inbox(server, user)

            // check: stored again as envelopes, read the same, and every path still opens them
            #expect(try await stored().allSatisfy { $0.starts(with: Array("YE1".utf8)) })
            #expect(try await Self.inbox(server, user) == first)
            let link = try #require(first.first?.link)
            let single = try await server.request(.GET, link, headers: user.passwordHeader)
            #expect(single.status == 200 && single.json["url"] as? String == first.first?.url, "\(single.text)")
            let read = try await server.request(.POST, "\(link)/markRead", headers: user.passwordHeader, json: ["properties": [String: Any]()])
            #expect(read.status == 200, "\(read.text)")
            #expect(try await server.messages(user).first?["isRead"] as? Bool == true)
        }
    }

    /// An action compares the bytes it read before it changes a message; a first listing that stored the message as
    /// an envelope in between changed the bytes, not what the message says, and the action still goes ahead.
    @Test(arguments: TestDatabase.available)
    func anActionGoesAheadOverAnEnvelopeStoredSinceItsRead(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard asks Bob; Bob's request is read (as a sealed box), then a listing stores its envelope
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let bob = try await server.createUser(firstName: "Bob", nickname: "BD")
            try await OverwriteTests.invite(server, from: richard, to: bob)
            let database = server.app.db
            let users = UserService(db: database, sms: server.app.sms(on: database), recovery: server.app.yona.recovery, testServer: true)
            let bobUser = try await users.unlock(userID: try #require(UUID(uuidString: bob.id)), passwordHeader: bob.password)
            let row = try #require(
                try await Message.query(on: database).filter(\.$userAnonymized.$id == bobUser.privateData.userAnonymizedID).first())
            let stale = try await MessageService(db: database).message(try #require(row.id), of: bobUser)
            #expect(!stale.record.sealedPayload.starts(with: Array("YE1".utf8)))
            _ = try await server.messages(bob)
            let now = try #require(try await Message.find(row.id, on: database))
            try #require(now.sealedPayload.starts(with: Array("YE1".utf8)), "the listing stored the envelope")

            // act: the action with what it read before the listing
            _ = try await BuddyService(db: database, users: users).respond(bobUser, to: stale, accept: true, text: nil)

            // check: accepted; a second answer to the same request is refused as a repeat
            let request = try #require(try await server.messages(bob).first { $0["@type"] as? String == "BuddyConnectRequestMessage" })
            #expect(request["status"] as? String == "ACCEPTED", "\(request)")
            await #expect(throws: YonaError.self) {
                _ = try await BuddyService(db: database, users: users).respond(bobUser, to: stale, accept: false, text: nil)
            }
        }
    }

    /// Robin, with a phone logged in to the VPN: the user, the anonymized id and the device index.
    static func robinWithAPhone(_ server: TestServer) async throws -> (TestUser, String, Int) {
        let user = try await server.createUser(
            nickname: "Robin",
            extra: ["deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1])
        let (ua, index) = try await server.vpnLogin(user)
        return (user, ua, index)
    }

    /// A goal conflict (gambling, the mandatory no-go goal) at each of the given hours ago.
    static func conflicts(_ server: TestServer, _ ua: String, _ index: Int, hoursAgo: [Int]) async throws {
        for hour in hoursAgo {
            let posted = try await server.postNetworkActivity(
                ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/\(hour)",
                at: Date().addingTimeInterval(-Double(hour) * 3600))
            try #require(posted.status == 204, "\(posted.text)")
        }
    }

    /// The inbox as the app sees it: each message's self link and the URL it was about.
    static func inbox(_ server: TestServer, _ user: TestUser) async throws -> [Entry] {
        try await server.messages(user).map { message in
            Entry(
                link: try #require(value(message, "_links", "self", "href") as? String),
                url: message["url"] as? String ?? "")
        }
    }

    struct Entry: Equatable {
        let link: String
        let url: String
    }

    static func partialIndexes(_ server: TestServer) async throws -> [String] {
        let sql = server.app.db.sql
        let query: SQLQueryString =
            sql.dialect.name == "sqlite"
            ? "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql LIKE '%WHERE%' ORDER BY name"
            : "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'messages' AND indexdef LIKE '%WHERE%' ORDER BY indexname"
        return try await sql.raw(query).all().map { try $0.decode(column: "name", as: String.self) }
    }
}
