import Fluent
import Foundation
import Testing
import YonaCrypto

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// api.md "Admin API": system announcements with translations and an expiry, fanned out through the outbox.
@Suite struct AnnouncementTests {
    static let texts = ["en-US": "Maintenance tonight", "nl-NL": "Vannacht onderhoud"]

    static func announce(_ server: TestServer, expiresAt: Date?, translations: [String: String] = texts) async throws -> APIResponse {
        var body: [String: Any] = ["translations": translations]
        if let expiresAt { body["expiresAt"] = YonaDateFormat.timestamp(expiresAt) }
        return try await server.request(.POST, "/admin/systemMessages/", headers: TestServer.bearer, json: body)
    }

    static func systemMessages(_ server: TestServer, _ user: TestUser, language: String = "en-US") async throws -> [[String: Any]] {
        let page = try await server.request(.GET, "\(user.path)/messages/", headers: user.passwordHeader + [("Accept-Language", language)])
        try #require(page.status == 200, "\(page.text)")
        return (value(page.json, "_embedded", "yona:messages") as? [[String: Any]] ?? []).filter { $0["@type"] as? String == "SystemMessage" }
    }

    static func fanOut(_ server: TestServer) async throws {
        while try await server.app.announcementFanOut.runOnce(limit: 2) > 0 {}
    }

    @Test(arguments: TestDatabase.available)
    func anAnnouncementWithExpiryReachesExistingAndNewUsersAndThenGoes(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let phoneUser = try await server.createUser(extra: BuddyTests.phone("fiid-announcement-phone"))
            let others = [try await server.createUser(), try await server.createUser(confirm: false)]
            let expiresAt = Date().addingTimeInterval(3600)
            // act
            let posted = try await Self.announce(server, expiresAt: expiresAt)
            #expect(posted.status == 202, "\(posted.text)")
            #expect(try await Self.systemMessages(server, phoneUser).isEmpty, "the fan-out runs in the workers, not in the request")
            try await Self.fanOut(server)
            try await server.app.pushDispatcher.drainOnce()
            // check: every existing user has it, in the language it is fetched in, from "Yona"
            let english = try #require(try await Self.systemMessages(server, phoneUser).first)
            #expect(english["message"] as? String == "Maintenance tonight")
            #expect(english["nickname"] as? String == "Yona")
            #expect(try await Self.systemMessages(server, phoneUser, language: "nl-NL").first?["message"] as? String == "Vannacht onderhoud")
            #expect(try await Self.systemMessages(server, others[0]).count == 1)
            let unconfirmed = try await Message.query(on: server.app.db).filter(\.$announcementID != nil).count()
            #expect(unconfirmed == 3, "the unconfirmed user's inbox holds it too")
            // and a content-free push went to the phone
            let push = try await server.request(.GET, "/test/firebase/messages/last/fiid-announcement-phone")
            #expect(push.status == 200)
            #expect(value(push.json, "data", "messageId") as? String == String(english["messageId"] as? Int ?? -1))
            #expect(!push.text.contains("Maintenance"))
            // a user created before the expiry gets it too, without another fan-out
            let late = try await server.createUser()
            #expect(try await Self.systemMessages(server, late).first?["message"] as? String == "Maintenance tonight")
            // act: the expiry passes (moved into the past rather than waited for)
            try await SystemAnnouncement.query(on: server.app.db).set(\.$expiresAt, to: Date().addingTimeInterval(-1)).update()
            // check: gone from every inbox at once, and purged from the database
            #expect(try await Self.systemMessages(server, phoneUser).isEmpty)
            #expect(try await Self.systemMessages(server, late).isEmpty)
            let single = try await server.request(
                .GET, "\(phoneUser.path)/messages/\(english["messageId"] as? Int ?? 0)", headers: phoneUser.passwordHeader)
            #expect(single.errorCode == "error.message.not.found")
            try await AnnouncementService(db: server.app.db).purgeExpired()
            #expect(try await Message.query(on: server.app.db).filter(\.$announcementID != nil).count() == 0)
            #expect(try await SystemAnnouncement.query(on: server.app.db).count() == 0)
            let afterExpiry = try await server.createUser()
            #expect(try await Self.systemMessages(server, afterExpiry).isEmpty)
        }
    }

    @Test(arguments: TestDatabase.available)
    func withoutExpiryOnlyTheUsersOfThatMomentGetIt(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let existing = try await server.createUser()
            // act: the workers take the snapshot (normally within a poll interval of the POST), then someone joins
            #expect(try await Self.announce(server, expiresAt: nil).status == 202)
            try await server.app.announcementFanOut.takeSnapshots()
            let newcomer = try await server.createUser()
            try await Self.fanOut(server)
            // check
            #expect(try await Self.systemMessages(server, existing).count == 1)
            #expect(try await Self.systemMessages(server, newcomer).isEmpty)
        }
    }

    /// The POST stores the announcement alone; the workers take the snapshot. Users who join between the two are
    /// in the snapshot, users who join while it is being taken get an expiring announcement once: from the snapshot
    /// or at their creation, never both and never neither (written as the race: sign-ups in parallel with it).
    @Test(arguments: TestDatabase.available)
    func usersJoiningAroundTheSnapshotGetEachAnnouncementOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: one announcement with an expiry, one without; a user joins before the workers take the snapshot
            #expect(try await Self.announce(server, expiresAt: Date().addingTimeInterval(3600)).status == 202)
            #expect(try await Self.announce(server, expiresAt: nil).status == 202)
            #expect(try await server.app.announcementFanOut.pending() == 0, "the request took no snapshot")
            let early = try await server.createUser()
            #expect(try await Self.systemMessages(server, early).isEmpty, "left to the snapshot")
            // act: sign-ups in parallel with the snapshot being taken
            let joining = try await withThrowingTaskGroup(of: TestUser.self) { group in
                for _ in 0..<8 { group.addTask { try await server.createUser() } }
                group.addTask {
                    try await server.app.announcementFanOut.takeSnapshots()
                    return try await server.createUser()
                }
                return try await group.reduce(into: [TestUser]()) { $0.append($1) }
            }
            try await Self.fanOut(server)
            // check: the early user has both; each user who joined around the snapshot has the expiring one exactly once
            #expect(try await Self.systemMessages(server, early).count == 2)
            for user in joining {
                let messages = try await Self.systemMessages(server, user)
                #expect((1...2).contains(messages.count), "\(messages.count)")
            }
            let copies = try await Message.query(on: server.app.db).filter(\.$announcementID != nil).all()
            let perUserAndAnnouncement = Dictionary(grouping: copies) { "\($0.$userAnonymized.id)/\($0.announcementID!)" }
            #expect(perUserAndAnnouncement.values.allSatisfy { $0.count == 1 }, "a copy was delivered twice")
            let expiring = try #require(try await SystemAnnouncement.query(on: server.app.db).filter(\.$expiresAt != nil).first())
            #expect(copies.filter { $0.announcementID == expiring.id }.count == 10, "every user has the expiring one")
        }
    }

    @Test(arguments: TestDatabase.available)
    func badAnnouncementsAreRefused(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let cases: [(String, [String: Any], [(String, String)], Int, String)] = [
                ("no token", ["translations": Self.texts], [], 401, "error.unauthorized"),
                ("no translations", [:], TestServer.bearer, 400, "error.request.missing.property"),
                ("no en-US", ["translations": ["nl-NL": "Hallo"]], TestServer.bearer, 400, "error.request.missing.property"),
                ("unknown locale", ["translations": ["en-US": "Hi", "xx-YY": "?"]], TestServer.bearer, 400, "error.request.invalid.parameter"),
                (
                    "expired already", ["translations": Self.texts, "expiresAt": YonaDateFormat.timestamp(Date().addingTimeInterval(-60))],
                    TestServer.bearer, 400, "error.request.invalid.parameter"
                ),
                ("bad date", ["translations": Self.texts, "expiresAt": "tomorrow"], TestServer.bearer, 400, "error.request.invalid.json"),
                ("extra property", ["translations": Self.texts, "priority": 1], TestServer.bearer, 400, "error.request.extra.property"),
            ]
            for (name, body, headers, status, code) in cases {
                let response = try await server.request(.POST, "/admin/systemMessages/", headers: headers, json: body)
                #expect(response.status == status, "\(name): \(response.text)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
            #expect(try await SystemAnnouncement.query(on: server.app.db).count() == 0)
        }
    }

    /// 10,000 anonymized users (seeded directly: the fan-out only reads the anonymized side), one in ten with
    /// a phone. The workers fan the broadcast out while a real user's authenticated requests keep answering.
    @Test(arguments: TestDatabase.available)
    func aLargeBroadcastCompletesThroughTheOutboxWhileRequestsKeepAnswering(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.push.workersEnabled = true }) { server in
            // setup
            let seeded = 10_000
            var users: [UserAnonymized] = []
            var devices: [DeviceAnonymized] = []
            for index in 0..<seeded {
                let id = UUID()
                users.append(UserAnonymized(id: id, anonymousInboxPublicKey: Data(BoxKeyPair.generate().publicKey)))
                if index % 10 == 0 {
                    devices.append(
                        DeviceAnonymized(
                            id: UUID(), userAnonymizedID: id, deviceIndex: 0, operatingSystem: "ANDROID",
                            appVersion: "1.0", appVersionCode: 1, firebaseInstanceID: "fiid-bulk-\(index)"))
                }
            }
            for chunk in users.chunked(500) { try await chunk.create(on: server.app.db) }
            for chunk in devices.chunked(500) { try await chunk.create(on: server.app.db) }
            let user = try await server.createUser()
            let fanOut = server.app.announcementFanOut

            // act
            #expect(try await Self.announce(server, expiresAt: nil).status == 202)
            let metrics = try await server.request(.GET, "/metrics")
            #expect(metrics.text.contains("yona_announcement_recipients_pending"), "the fan-out's progress is scrapeable")
            var answered = 0
            var answeredDuringFanOut = 0
            var failures: [String] = []
            let deadline = Date().addingTimeInterval(300)
            while Date() < deadline {
                // the workers take the snapshot first (until then nothing is pending yet), then work it off
                let snapshotToTake = try await SystemAnnouncement.query(on: server.app.db).filter(\.$snapshotTaken == false).count()
                let pending = try await fanOut.pending()
                let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
                if profile.status == 200 { answered += 1 } else { failures.append(profile.text) }
                if pending > 0 && profile.status == 200 { answeredDuringFanOut += 1 }
                let open = try await PendingPush.query(on: server.app.db)
                    .filter(\.$state == PendingPush.State.pending.rawValue).count()
                if snapshotToTake == 0 && pending == 0 && open == 0 { break }
            }

            // check: every user has exactly one copy, every phone one sent push, and requests never failed
            #expect(try await fanOut.pending() == 0)
            #expect(try await Message.query(on: server.app.db).filter(\.$announcementID != nil).count() == seeded + 1)
            // each phone's delivery is recorded (test servers keep the last push per token); delivered rows are deleted
            #expect(try await PushDelivery.query(on: server.app.db).count() == devices.count)
            #expect(try await PendingPush.query(on: server.app.db).count() == 0)
            #expect(failures.isEmpty, "\(failures.prefix(3))")
            #expect(answeredDuringFanOut > 0, "no request was answered while the fan-out ran")
            #expect(try await Self.systemMessages(server, user).count == 1)
        }
    }
}
