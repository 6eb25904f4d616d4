import Fluent
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import YonaAPI
@testable import YonaDelivery
@testable import YonaPush
@testable import YonaServer
@testable import YonaStore

/// push.md "The payload" and "The delivery pipeline", with the embedded `log` provider.
@Suite struct PushTests {
    /// Waits until the background workers have finished every outbox row.
    static func drained(_ server: TestServer) async throws {
        for _ in 0..<100 {
            let open = try await PendingPush.query(on: server.app.db)
                .filter(\.$state == PendingPush.State.pending.rawValue).count()
            if open == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the outbox did not drain")
    }

    @Test(arguments: TestDatabase.available)
    func theStoryEndsOnPhonesWithContentFreePushes(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.push.workersEnabled = true }) { server in
            // setup: Bob (with a danger zone) and his buddy Richard, each with a phone
            let richard = try await server.createUser(firstName: "Richard", nickname: "Dad", extra: BuddyTests.phone("fiid-richard-phone"))
            let bob = try await server.createUser(firstName: "Bobbert", nickname: "Bobby", extra: BuddyTests.phone("fiid-bob-phone"))
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            _ = try await server.messages(richard)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(bob)
            try await Self.drained(server)

            // act: the visit, then the workers deliver
            try await server.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/secret-table")
            try await Self.drained(server)

            // check: each phone's last push is the conflict meant for it, content-free, and nothing went twice
            let own = try #require(try await server.messages(bob).first?["messageId"] as? Int)
            let copy = try #require(try await server.messages(richard).first?["messageId"] as? Int)
            let schema = try JSONSchema.load("push-message.schema.json")
            for (token, expected) in [("fiid-bob-phone", own), ("fiid-richard-phone", copy)] {
                let last = try await server.request(.GET, "/test/firebase/messages/last/\(token)")
                #expect(last.status == 200)
                let data = try #require(last.json["data"] as? [String: String])
                #expect(data == ["messageId": String(expected), "url": "\(server.app.yona.config.pushBaseURL)/messages/\(expected)"])
                let body = try JSONEncoder().encode(
                    PushMessage.make(token: token, messageID: Int64(expected), publicBaseURL: server.app.yona.config.pushBaseURL))
                #expect(schema.violations(of: body).isEmpty, "\(schema.violations(of: body))")
                for secret in [
                    bob.id, bob.mobileNumber, bob.firstName, "Bobby", "poker", "gambling", "Gambling", GoalsTests.gambling, ua, richard.id,
                ] {
                    #expect(!last.text.contains(secret), "the push carries \(secret)")
                }
            }
            // delivered rows are gone from the outbox (it keeps no record of which device was told of which message)
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$messageID ~~ [Int64(own), Int64(copy)]).count() == 0)
            let unknown = try await server.request(.GET, "/test/firebase/messages/last/fiid-nobody")
            #expect(unknown.status == 404)

            // the metrics count what happened, and say nothing about whom
            let metrics = try await server.request(.GET, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers.first(name: "Content-Type")?.hasPrefix("text/plain") == true)
            let text = metrics.text
            let sent = text.split(separator: "\n").first { $0.hasPrefix("yona_pushes_total{") && $0.contains("outcome=\"sent\"") }
            #expect(sent.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 >= 2 } == true, "\(sent ?? "no sent counter")")
            #expect(text.contains("yona_push_outbox_depth 0"))
            #expect(text.contains("yona_analyzer_events_total"))
            #expect(text.contains("yona_goal_conflict_messages_total"))
            for secret in [bob.id, bob.mobileNumber, "fiid-bob-phone", "poker", ua] {
                #expect(!text.contains(secret), "metrics carry \(secret)")
            }
        }
    }

    @Test func testEndpointsAreAbsentOutsideATestServer() async throws {
        try await withServer(.sqlite, adjust: { $0.testServer = false }) { server in
            let response = try await server.request(.GET, "/test/firebase/messages/last/anything")
            #expect(response.status == 404)
            #expect(response.errorCode == "error.request.unknown.path")
        }
    }

    @Test(arguments: TestDatabase.available)
    func perDeviceOrderLeasesAndClearedTokens(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: a device with two queued pushes, and a device whose token is gone
            let user = try await server.createUser(extra: BuddyTests.phone("fiid-order"))
            let devices = try await DeviceAnonymized.query(on: server.app.db).all()
            let device = try #require(devices.first { $0.firebaseInstanceID == "fiid-order" })
            let t0 = Date().addingTimeInterval(-10)
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: 11, now: t0).create(on: server.app.db)
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: 12, now: t0.addingTimeInterval(1)).create(on: server.app.db)
            // the two are counted, by provider, with the older one's time (by the database, for /metrics and the console)
            let waiting = try await PushOutbox.depthByProvider(on: server.app.db)["FCM"]
            #expect(waiting?.count == 2 && waiting?.oldest.map { abs($0.timeIntervalSince(t0)) < 0.01 } == true, "\(String(describing: waiting))")
            #expect(try await server.request(.GET, "/metrics").text.contains("yona_push_outbox_depth 2"))
            let dispatcher = server.app.pushDispatcher
            // act + check: one per device per round, oldest first
            #expect(try await dispatcher.drainOnce() == 1)
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$messageID == 11).first() == nil, "sent and deleted")
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$messageID == 12).first()?.state == "pending")
            #expect(try await dispatcher.drainOnce() == 1)
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$messageID == 12).first() == nil)
            // a claim whose worker died (lease lapsed) is claimed again; a live claim is not
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: 13, now: t0).create(on: server.app.db)
            try await PendingPush.query(on: server.app.db).filter(\.$messageID == 13)
                .set(\.$claimedUntil, to: Date().addingTimeInterval(30)).update()
            #expect(try await dispatcher.drainOnce() == 0)
            #expect(try await dispatcher.drainOnce(now: Date().addingTimeInterval(31)) == 1)
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$messageID == 13).first() == nil)
            // a device without a token gets nothing
            try await DeviceAnonymized.query(on: server.app.db).filter(\.$id == device.id!).set(\.$firebaseInstanceID, to: nil).update()
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: 14, now: Date()).create(on: server.app.db)
            #expect(try await dispatcher.drainOnce() == 1)
            let dropped = try #require(try await PendingPush.query(on: server.app.db).filter(\.$messageID == 14).first())
            #expect(dropped.state == "failed")
            #expect(dropped.lastError == "NO_TOKEN")
            _ = user
        }
    }

    /// Phones that share one Instance ID (a legacy device entry copied to a second phone) get their pushes in one batch.
    /// The test server's last-push bookkeeping for that token must not abort the batch: PostgreSQL refused the second
    /// insert of one token's row, the round failed, and pushes already sent went out again after their lease.
    @Test(arguments: TestDatabase.available)
    func devicesSharingATokenInOneBatchAreEachPushedOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: sixteen devices with one token, a push queued for each
            let owner = try await server.createUser()
            let (ua, _) = try await server.vpnLogin(owner)
            for index in 1...16 {
                let device = DeviceAnonymized(
                    id: UUID(), userAnonymizedID: UUID(uuidString: ua)!, deviceIndex: index, operatingSystem: "ANDROID",
                    appVersion: "1", appVersionCode: 1, firebaseInstanceID: "shared-token")
                try await device.create(on: server.app.db)
                try await PendingPush(id: UUID(), deviceID: device.id!, messageID: Int64(index), now: Date().addingTimeInterval(-5))
                    .create(on: server.app.db)
            }

            // act: one round claims them all and sends them side by side
            let claimed = try await server.app.pushDispatcher.drainOnce()

            // check: every push went, none is left to go again, the token's last push is recorded once
            #expect(claimed == 16)
            #expect(try await PendingPush.query(on: server.app.db).count() == 0)
            #expect(try await PushDelivery.query(on: server.app.db).filter(\.$tokenHash == TokenHash.of("shared-token")).count() == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func switchedOffDevicesGetNothingAndStaleTokensArePruned(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: a user with a phone whose notifications are switched off
            let user = try await server.createUser(extra: BuddyTests.phone("fiid-quiet"))
            try await server.addNoGoGoal(user, category: GoalsTests.gambling)
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let off = try await server.request(
                .PUT, "\(user.path)/devices/\(deviceID)", headers: user.passwordHeader,
                json: ["name": "Phone", "notificationsEnabled": false])
            #expect(off.json["notificationsEnabled"] as? Bool == false)
            #expect(off.json["firebaseInstanceId"] as? String == "fiid-quiet")
            // act
            let (ua, _) = try await server.vpnLogin(user)
            try await server.postNetworkActivity(ua, categories: ["gambling"], url: "https://poker.example/quiet")
            // check: the message exists, no push was queued
            #expect(try await server.messages(user).count == 1)
            #expect(try await PendingPush.query(on: server.app.db).count() == 0)

            // a token the app has not sent again for 60 days is pruned; a fresh one stays
            let other = try await server.createUser(extra: BuddyTests.phone("fiid-fresh"))
            try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "fiid-quiet")
                .set(\.$firebaseInstanceIDUpdatedAt, to: Date().addingTimeInterval(-61 * 86_400)).update()
            #expect(try await server.app.pushDispatcher.pruneStaleTokens() == 1)
            let (_, quiet) = try await DevicesTests.firstDevice(server, user)
            #expect(quiet["firebaseInstanceId"] == nil)
            let (_, fresh) = try await DevicesTests.firstDevice(server, other)
            #expect(fresh["firebaseInstanceId"] as? String == "fiid-fresh")
        }
    }

    /// Counts what reaches the provider boundary, then hands it to the real `log` provider.
    final class CountingProvider: PushProvider, @unchecked Sendable {
        let inner: LogPushProvider
        let sent = NIOLockedValueBox([Int64: Int]())
        /// Message ids in the order they reached the boundary, per token.
        let order = NIOLockedValueBox([String: [Int64]]())
        var name: String { "counting" }
        init(_ inner: LogPushProvider) { self.inner = inner }
        func send(_ push: OutgoingPush) async -> PushOutcome {
            let id = Int64(push.data["messageId"]!)!
            sent.withLockedValue { $0[id, default: 0] += 1 }
            order.withLockedValue { $0[push.address.secret, default: []].append(id) }
            return await inner.send(push)
        }
    }

    /// A new user with `devices` phones (tokens `tokenPrefix` + 1…), each with `pushesEach` pushes queued a second
    /// apart (message ids `device * 100 + push`, so a device's ids rise in queue order). Returns the first push's time.
    @discardableResult
    static func queuePushes(_ server: TestServer, devices: Int, pushesEach: Int, tokenPrefix: String) async throws -> Date {
        let owner = try await server.createUser()
        let (ua, _) = try await server.vpnLogin(owner)
        let t0 = Date().addingTimeInterval(-60)
        for index in 1...devices {
            let device = DeviceAnonymized(
                id: UUID(), userAnonymizedID: UUID(uuidString: ua)!, deviceIndex: index, operatingSystem: "ANDROID",
                appVersion: "1", appVersionCode: 1, firebaseInstanceID: "\(tokenPrefix)\(index)")
            try await device.create(on: server.app.db)
            for push in 0..<pushesEach {
                try await PendingPush(
                    id: UUID(), deviceID: device.id!, messageID: Int64(index * 100 + push), now: t0.addingTimeInterval(Double(push))
                ).create(on: server.app.db)
            }
        }
        return t0
    }

    /// The workers' pipelined drain: claims overlap sends and finishing, yet each device still gets its pushes in
    /// the order they were queued, each once; delivered rows are deleted at once, failed ones after the retention.
    @Test(arguments: TestDatabase.available)
    func aDrainKeepsEachDevicesOrderAndFinishedRowsArePurgedLater(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: 12 devices with 6 pushes each, queued a second apart per device
            let t0 = try await Self.queuePushes(server, devices: 12, pushesEach: 6, tokenPrefix: "fiid-order-")
            let counter = CountingProvider(LogPushProvider(logger: server.app.logger))
            var settings = server.app.yona.config.push
            settings.concurrency = 5
            let dispatcher = PushDispatcher(
                db: server.app.db, provider: counter, settings: settings, publicBaseURL: "http://127.0.0.1",
                skipLocked: db == .postgres, logger: server.app.logger)
            // act: small claims and few sends in flight, so claims, sends and finishing overlap many times
            var claimed = 0
            for _ in 0..<50 {
                let round = try await dispatcher.drain(limit: 4)
                claimed += round
                if round == 0 { break }
            }
            // check
            #expect(claimed == 72)
            #expect(counter.sent.withLockedValue { $0 }.values.allSatisfy { $0 == 1 })
            let order = counter.order.withLockedValue { $0 }
            #expect(order.count == 12)
            for (token, ids) in order { #expect(ids == ids.sorted() && ids.count == 6, "\(token): \(ids)") }
            #expect(try await PendingPush.query(on: server.app.db).count() == 0, "delivered rows are deleted")
            // a row still waiting is never purged; failed rows only once older than the retention
            let device = try #require(try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "fiid-order-1").first())
            let waiting = PendingPush(id: UUID(), deviceID: device.id!, messageID: 999, now: t0)
            waiting.nextAttemptAt = Date().addingTimeInterval(3600)
            try await waiting.create(on: server.app.db)
            for id in 1000..<1025 {
                let failed = PendingPush(id: UUID(), deviceID: device.id!, messageID: Int64(id), now: t0)
                failed.state = PendingPush.State.failed.rawValue
                try await failed.create(on: server.app.db)
            }
            #expect(try await dispatcher.purgeFinished() == 0)
            #expect(try await dispatcher.purgeFinished(now: Date().addingTimeInterval(PushDispatcher.finishedRetention), chunk: 10) == 25)
            #expect(try await PendingPush.query(on: server.app.db).all().map(\.messageID) == [999])
        }
    }

    @Test func twoInstancesDrainOneOutboxWithoutSendingTwice() async throws {
        guard TestDatabase.available.contains(.postgres) else { return }
        try await withServer(.postgres) { first in
            let second = try await TestServer.start(.postgres, sharingDatabaseOf: first)
            // setup: 40 devices with 5 pushes each
            try await Self.queuePushes(first, devices: 40, pushesEach: 5, tokenPrefix: "fiid-bulk-")
            let counter = CountingProvider(LogPushProvider(logger: first.app.logger))
            func dispatcher(_ server: TestServer) -> PushDispatcher {
                PushDispatcher(
                    db: server.app.db, provider: counter, settings: server.app.yona.config.push,
                    publicBaseURL: "http://127.0.0.1", skipLocked: true, logger: server.app.logger)
            }
            // act: both instances drain concurrently, as their workers do (the pipelined drain, small claims so the two
            // interleave), until nothing is left
            try await withThrowingTaskGroup(of: Void.self) { group in
                for server in [first, second] {
                    group.addTask {
                        var idle = 0
                        while idle < 3 {
                            idle = try await dispatcher(server).drain(limit: 7) == 0 ? idle + 1 : 0
                        }
                    }
                }
                try await group.waitForAll()
            }
            await second.stop()
            // check: each push once, and each device's in the order they were queued, across both instances
            let counts = counter.sent.withLockedValue { $0 }
            #expect(counts.count == 200)
            #expect(counts.values.allSatisfy { $0 == 1 }, "a push went out twice")
            for (token, ids) in counter.order.withLockedValue({ $0 }) {
                #expect(ids == ids.sorted() && ids.count == 5, "\(token): \(ids)")
            }
            #expect(try await PendingPush.query(on: first.app.db).count() == 0)
        }
    }
}
