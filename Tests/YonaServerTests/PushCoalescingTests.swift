import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaPush
@testable import YonaServer
@testable import YonaStore

/// Issue 34: a device has at most one push waiting. A push says only "there is something new"; messages queued while
/// one waits fold into it, and the device is told once, of its newest message.
@Suite struct PushCoalescingTests {
    static func open(_ server: TestServer) async throws -> [PendingPush] {
        try await PendingPush.query(on: server.app.db).filter(\.$state == PendingPush.State.pending.rawValue).all()
    }

    /// Every message id in the user's inbox, newest first (ids are random; the inbox is in writing order).
    static func inbox(_ server: TestServer, _ user: TestUser) async throws -> [Int64] {
        try await server.messages(user, query: "?size=100").compactMap { ($0["messageId"] as? Int).map(Int64.init) }
    }

    /// The last push's `messageId` of each message the emulator took for `token`.
    static func pushed(_ emulator: FCMEmulator, _ token: String) throws -> [Int64] {
        try emulator.messages(to: token).map { body in
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let data = try #require((json["message"] as? [String: Any])?["data"] as? [String: String])
            return try #require(data["messageId"].flatMap(Int64.init))
        }
    }

    /// A user with a phone (`token`) and the gambling no-go goal, logged in to the VPN: the user, and the anonymized
    /// id and device index the classifier posts for.
    static func phoneUser(_ server: TestServer, _ token: String) async throws -> (user: TestUser, ua: String, index: Int) {
        let user = try await server.createUser(extra: BuddyTests.phone(token))
        try await server.addNoGoGoal(user, category: GoalsTests.gambling)
        let (ua, index) = try await server.vpnLogin(user)
        return (user, ua, index)
    }

    /// A visit to the gambling site by the user's device, `n` × 20 minutes ago: one goal conflict.
    static func conflict(_ server: TestServer, _ ua: String, _ index: Int, _ n: Int) async throws {
        let response = try await server.postNetworkActivity(
            ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/\(n)", at: Date().addingTimeInterval(-Double(n) * 1200))
        try #require(response.status == 204, "\(response.text)")
    }

    @Test(arguments: TestDatabase.available)
    func fiftyMessagesWhileTheSinkIsDownArriveAsOnePushNamingTheNewest(db: TestDatabase) async throws {
        let emulator = try await FCMEmulator.start()
        try await withServer(db, adjust: try emulator.configure(workers: false)) { server in
            // setup: a user with a phone and a no-go goal; whatever the set-up queued is sent
            let (bob, ua, index) = try await Self.phoneUser(server, "ok-coalesce")
            // the server's drain, with a client that waits out however long this loaded machine takes to post below
            let (provider, _) = try await FCMTests.provider(emulator, timeout: 300)
            let dispatcher = PushDispatcher(
                db: server.app.db, provider: provider, settings: server.app.yona.config.push, publicBaseURL: server.app.yona.config.pushBaseURL,
                skipLocked: db == .postgres, logger: server.app.logger)
            while try await dispatcher.drainOnce(now: Date().addingTimeInterval(7200)) > 0 {}
            let before = try Self.pushed(emulator, "ok-coalesce").count

            // act 1: Firebase is down; the first conflict's push goes out and fails, the next 24 fold into it
            emulator.setDown(true)
            try await Self.conflict(server, ua, index, 1)
            #expect(try await dispatcher.drainOnce(now: Date().addingTimeInterval(7200)) == 1)
            for n in 2...25 { try await Self.conflict(server, ua, index, n) }
            let folded = try await Self.open(server)
            #expect(folded.count == 1, "one push waits for 25 messages")
            #expect(folded.first?.attempts == 1, "it keeps the failed attempt's count")

            // act 2: while that push is out (Firebase hangs), 25 more messages wait as one more push
            emulator.setHanging(true)
            let round = Task { try await dispatcher.drainOnce(now: Date().addingTimeInterval(7200)) }
            for _ in 0..<200 where emulator.hungRequests == 0 { try await Task.sleep(for: .milliseconds(25)) }
            try #require(emulator.hungRequests == 1)
            for n in 26...50 { try await Self.conflict(server, ua, index, n) }
            #expect(try await Self.open(server).count == 2, "the push out, and one waiting behind it")
            emulator.setHanging(false)
            #expect(try await round.value == 1)
            // the failed one is folded into the one that waited: it names the newer message
            let left = try await Self.open(server)
            #expect(left.count == 1)
            #expect(left.first?.attempts == 2)

            // act 3: Firebase is back
            emulator.setDown(false)
            #expect(try await dispatcher.drainOnce(now: Date().addingTimeInterval(7200)) == 1)
            #expect(try await dispatcher.drainOnce(now: Date().addingTimeInterval(7200)) == 0)

            // check: one push arrived, naming the newest of the 50 messages
            let inbox = try await Self.inbox(server, bob)
            #expect(inbox.count >= 50)
            let arrived = Array(try Self.pushed(emulator, "ok-coalesce").dropFirst(before))
            #expect(arrived == [inbox.first!], "\(arrived)")
            #expect(try await Self.open(server).isEmpty)
        }
        await emulator.stop()
    }

    /// A withdrawn message hands its waiting push on to the newest message the push still stands for; a push that
    /// stands for nothing else goes.
    @Test(arguments: TestDatabase.available)
    func aWithdrawnMessageHandsItsPushOnToTheNewestStillThere(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (bob, ua, index) = try await Self.phoneUser(server, "fiid-withdraw")
            while try await server.app.pushDispatcher.drainOnce(now: Date().addingTimeInterval(7200)) > 0 {}
            for n in 1...3 { try await Self.conflict(server, ua, index, n) }
            let ids = Array(try await Self.inbox(server, bob).reversed())
            try #require(ids.count == 3)
            #expect(try await Self.open(server).map(\.messageID) == [ids[2]])

            // act + check: the newest goes, the push names the one before it
            try await server.app.db.transaction { tx in _ = try await MessageWriter.delete(on: tx) { $0.filter(\.$id == ids[2]) } }
            let handed = try await Self.open(server)
            #expect(handed.map(\.messageID) == [ids[1]])
            // an older one going changes nothing; the last two going take the push with them
            try await server.app.db.transaction { tx in _ = try await MessageWriter.delete(on: tx) { $0.filter(\.$id == ids[0]) } }
            #expect(try await Self.open(server).map(\.messageID) == [ids[1]])
            try await server.app.db.transaction { tx in _ = try await MessageWriter.delete(on: tx) { $0.filter(\.$id == ids[1]) } }
            #expect(try await Self.open(server).isEmpty)
        }
    }

    /// Ten announcements to four phones: each phone is told once, of its newest copy.
    @Test(arguments: TestDatabase.available)
    func announcementsFanOutToOnePushPerDevice(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var users: [(TestUser, String)] = []
            for n in 1...4 {
                users.append((try await server.createUser(extra: BuddyTests.phone("fiid-fan-\(n)")), "fiid-fan-\(n)"))
            }
            while try await server.app.pushDispatcher.drainOnce(now: Date().addingTimeInterval(7200)) > 0 {}
            for _ in 1...10 { #expect(try await AnnouncementTests.announce(server, expiresAt: Date().addingTimeInterval(3600)).status == 202) }
            try await server.app.announcementFanOut.takeSnapshots()
            try await AnnouncementTests.fanOut(server)
            #expect(try await Self.open(server).count == 4, "one push per phone for ten announcements")
            #expect(try await server.app.pushDispatcher.drainOnce(now: Date().addingTimeInterval(7200)) == 4)
            #expect(try await server.app.pushDispatcher.drainOnce(now: Date().addingTimeInterval(7200)) == 0)
            for (user, token) in users {
                let copies = try await AnnouncementTests.systemMessages(server, user).compactMap { ($0["messageId"] as? Int).map(Int64.init) }
                #expect(copies.count == 10)
                let last = try await server.request(.GET, "/test/firebase/messages/last/\(token)")
                // the newest copy (copies of one fan-out batch share their writing time, so any of those)
                let named = try #require((last.json["data"] as? [String: String])?["messageId"].flatMap(Int64.init))
                let written = try await Message.query(on: server.app.db).filter(\.$id ~~ copies).all()
                let newest = written.map(\.creationTime).max()
                #expect(written.first { $0.id == named }?.creationTime == newest, "\(named) is not among the newest copies")
            }
        }
    }

    /// An older build's backlog is folded on upgrade: the oldest waiting row stays, naming the newest message; a row
    /// being sent is left alone.
    @Test(arguments: TestDatabase.available)
    func theMigrationFoldsAnOlderBuildsBacklog(db: TestDatabase) async throws {
        try await withServer(db) { server in
            _ = try await server.createUser(extra: BuddyTests.phone("fiid-backlog"))
            let device = try #require(try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "fiid-backlog").first())
            try await PendingPush.query(on: server.app.db).delete()
            let t0 = Date().addingTimeInterval(-60)
            let out = PendingPush(id: UUID(), deviceID: device.id!, messageID: 7, now: t0)
            out.claimedUntil = Date().addingTimeInterval(30)
            try await out.create(on: server.app.db)
            for (offset, message) in [(1, 31), (2, 12), (3, 53)] {
                try await PendingPush(id: UUID(), deviceID: device.id!, messageID: Int64(message), now: t0.addingTimeInterval(Double(offset)))
                    .create(on: server.app.db)
            }
            try await CoalescePushesPerDevice().prepare(on: server.app.db)
            let rows = try await PendingPush.query(on: server.app.db).sort(\.$createdAt).all()
            #expect(rows.map(\.messageID) == [7, 53])
            #expect(rows.last.map { abs($0.createdAt.timeIntervalSince(t0.addingTimeInterval(1))) < 0.01 } == true, "the oldest waiting row stays")
        }
    }

    /// With a minimum interval, a device pushed a moment ago is pushed again only once it has passed, of the newest.
    @Test(arguments: TestDatabase.available)
    func aDeviceIsPushedAtMostOncePerInterval(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (bob, ua, index) = try await Self.phoneUser(server, "fiid-interval")
            let counter = PushTests.CountingProvider(LogPushProvider(logger: server.app.logger))
            var settings = server.app.yona.config.push
            settings.minimumIntervalSeconds = 60
            let dispatcher = PushDispatcher(
                db: server.app.db, provider: counter, settings: settings, publicBaseURL: "http://127.0.0.1", skipLocked: db == .postgres,
                logger: server.app.logger, metrics: server.app.yona.metrics)
            while try await dispatcher.drainOnce() > 0 {}
            let pushedBefore = counter.order.withLockedValue { $0["fiid-interval"] ?? [] }.count
            // the first conflict is pushed at once
            try await Self.conflict(server, ua, index, 1)
            #expect(try await dispatcher.drainOnce() == 1)
            // the next, a moment later, is put off; the third folds into it
            try await Self.conflict(server, ua, index, 2)
            let putOffAt = Date()
            #expect(try await dispatcher.drainOnce() == 1)
            try await Self.conflict(server, ua, index, 3)
            let waiting = try await Self.open(server)
            #expect(waiting.count == 1)
            #expect(waiting.first.map { $0.nextAttemptAt > putOffAt && $0.attempts == 0 } == true, "put off, no attempt counted")
            #expect(try await dispatcher.drainOnce() == 0, "nothing is due within the interval")
            // once the interval has passed (as if the last push were a minute old): one more push, of the newest
            let device = try #require(waiting.first?.$device.id)
            dispatcher.recent.pushed(device, at: Date().addingTimeInterval(-61), forgetBefore: .distantPast)
            #expect(try await dispatcher.drainOnce(now: Date().addingTimeInterval(61)) == 1)
            let pushed = counter.order.withLockedValue { $0["fiid-interval"] ?? [] }.dropFirst(pushedBefore)
            let inbox = try await Self.inbox(server, bob)
            #expect(Array(pushed) == [inbox[2], inbox[0]], "\(pushed) for \(inbox.prefix(3))")
            #expect(try await server.request(.GET, "/metrics").text.contains("yona_pushes_put_off_total 1"))
        }
    }
}
