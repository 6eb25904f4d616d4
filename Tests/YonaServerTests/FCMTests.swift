import AsyncHTTPClient
import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaPush
@testable import YonaServer
@testable import YonaStore

/// push.md "Firebase Cloud Messaging, HTTP v1": the production client against the local emulator, over real HTTP.
@Suite struct FCMTests {
    static func provider(_ emulator: FCMEmulator, timeout: Int64 = 10) async throws -> (FCMPushProvider, FCMAccessTokens) {
        let account = try FCMServiceAccount.load(path: try emulator.serviceAccountFile())
        let tokens = try await FCMAccessTokens(account: account, client: .shared)
        return (
            FCMPushProvider(
                endpoint: emulator.baseURL, projectID: account.projectID, tokens: tokens, client: .shared,
                timeout: .seconds(timeout)), tokens
        )
    }

    static func push(_ token: String, id: Int64 = 42) -> PushMessage {
        PushMessage.make(token: token, messageID: id, publicBaseURL: "https://yona.example")
    }

    /// The hand-written body is the same JSON value as the generic encoder's, for any token an app could send or a
    /// store could hold: quotes, backslashes, control characters, a combining mark right after a quote, emoji.
    @Test func theWrittenBodyIsTheEncodersJSON() throws {
        let tokens = [
            "fcm-token:APA91b", #"q"uote\back"#, "line\nbreak\ttab\r\u{01}\u{1F}", "\"\u{301}accent", "emoji🙂é", "", "/slash/",
        ]
        for token in tokens {
            let message = PushMessage.make(token: token, messageID: 9_007_199_254_740_993, publicBaseURL: "https://yona.example/a\"b")
            let written = Data(message.body().readableBytesView)
            #expect(try JSONDecoder().decode(PushMessage.self, from: written) == message, "\(token)")
            let generic = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(message)) as? NSDictionary
            #expect(try JSONSerialization.jsonObject(with: written) as? NSDictionary == generic, "\(token)")
        }
    }

    @Test func everyRowOfTheErrorTable() async throws {
        let emulator = try await FCMEmulator.start()
        let (fcm, _) = try await Self.provider(emulator)
        let cases: [(String, PushOutcome)] = [
            ("ok-token", .delivered),
            ("unregistered-1", .tokenInvalid(reason: "UNREGISTERED")),
            ("malformed-1", .tokenInvalid(reason: "INVALID_ARGUMENT")),
            ("apnsdead-1", .tokenInvalid(reason: "APNS_UNREGISTERED")),
            ("sender-1", .rejected(code: "SENDER_ID_MISMATCH")),
            ("thirdparty-1", .rejected(code: "THIRD_PARTY_AUTH_ERROR")),
            ("unavailable-1", .retry(after: 7, quota: false, code: "UNAVAILABLE")),
            ("quota-1", .retry(after: nil, quota: true, code: "QUOTA_EXCEEDED")),
        ]
        for (token, expected) in cases {
            #expect(await fcm.send(Self.push(token)) == expected, "\(token)")
        }
        // our own payload being wrong is a different row: no retry, the token is kept
        var broken = Self.push("ok-token")
        broken = PushMessage(
            message: .init(
                token: "ok-token", data: ["messageId": "42", "url": "x", "text": "hi"],
                android: broken.message.android, apns: broken.message.apns))
        #expect(await fcm.send(broken) == .rejected(code: "INVALID_ARGUMENT_PAYLOAD"))
        #expect(emulator.messages(to: "ok-token").count == 1)
        await emulator.stop()
    }

    /// push.md: FCM speaks HTTP/2 over TLS. The production client, trusting the operator's extra root
    /// (`YONA_FCM_CA`), negotiates h2 by ALPN for the OAuth grant and the sends; parallel sends share the connection's
    /// streams. Without that root the endpoint is refused (a transient failure) and nothing reaches it.
    @Test func sendsOverHTTP2WithTLSToATrustedEndpointOnly() async throws {
        let ca = try FCMEmulator.TestCA.make()
        let emulator = try await FCMEmulator.start(tls: ca)
        let account = try FCMServiceAccount.load(path: try emulator.serviceAccountFile())
        let rootPEM = try String(contentsOfFile: ca.root, encoding: .utf8)
        let config = try AppConfig.fromEnvironment(["YONA_FCM_CA": rootPEM])
        let client = try PushHTTPClient.make(concurrency: 8, trustRootsPEM: config.fcmTrustRootsPEM)
        let fcm = FCMPushProvider(
            endpoint: emulator.baseURL, projectID: account.projectID, tokens: try await FCMAccessTokens(account: account, client: client),
            client: client)
        let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
            for index in 0..<20 { group.addTask { await fcm.send(Self.push("ok-h2-\(index)", id: Int64(index + 1))) } }
            return await group.reduce(into: [PushOutcome]()) { $0.append($1) }
        }
        #expect(outcomes == Array(repeating: .delivered, count: 20))
        #expect(emulator.httpVersions == Array(repeating: 2, count: 20), "\(emulator.httpVersions)")
        #expect(emulator.messages(to: "ok-h2-7").count == 1)
        // the same endpoint without the extra root: the certificate is not trusted
        let untrusted = try PushHTTPClient.make(concurrency: 8, trustRootsPEM: nil)
        let refused = FCMPushProvider(
            endpoint: emulator.baseURL, projectID: account.projectID,
            tokens: try await FCMAccessTokens(account: account, client: untrusted), client: untrusted)
        #expect(await refused.send(Self.push("ok-untrusted")) == .retry(after: nil, quota: false, code: "NETWORK"))
        #expect(emulator.messages(to: "ok-untrusted").isEmpty)
        // a value that holds no certificate stops start-up with one line
        #expect(throws: AppConfig.Invalid(variable: "YONA_FCM_CA", problem: "holds no PEM certificate")) {
            try AppConfig.fromEnvironment(["YONA_FCM_CA": "not a certificate"])
        }
        try await client.shutdown()
        try await untrusted.shutdown()
        await emulator.stop()
    }

    @Test func aBare401RefreshesTheAccessTokenOnceAndRetries() async throws {
        let emulator = try await FCMEmulator.start()
        let (fcm, _) = try await Self.provider(emulator)
        #expect(await fcm.send(Self.push("ok-first")) == .delivered)
        #expect(emulator.refreshes == 1)
        #expect(await fcm.send(Self.push("expire-1")) == .delivered)
        #expect(emulator.refreshes == 2)
        #expect(emulator.messages(to: "expire-1").count == 1)
        await emulator.stop()
    }

    @Test func oneRefreshServesManyConcurrentSends() async throws {
        let emulator = try await FCMEmulator.start()
        let (fcm, _) = try await Self.provider(emulator)
        let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
            for index in 0..<30 { group.addTask { await fcm.send(Self.push("ok-\(index)", id: Int64(index + 1))) } }
            return await group.reduce(into: [PushOutcome]()) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0 == .delivered })
        #expect(emulator.refreshes == 1)
        await emulator.stop()
    }

    @Test func aHangingFirebaseIsATransientFailure() async throws {
        let emulator = try await FCMEmulator.start()
        let (fcm, _) = try await Self.provider(emulator, timeout: 1)
        #expect(await fcm.send(Self.push("hang-1")) == .retry(after: nil, quota: false, code: "NETWORK"))
        await emulator.stop()
    }

    /// The outbox follows the table: transient answers are retried later (Retry-After honoured, at least 60 s
    /// after a quota answer), permanent ones are not, and past the maximum age a push is failed.
    @Test(arguments: TestDatabase.available)
    func theOutboxRetriesAndGivesUpAsTheTableSays(db: TestDatabase) async throws {
        let emulator = try await FCMEmulator.start()
        try await withServer(db, adjust: try emulator.configure(workers: false)) { server in
            let owner = try await server.createUser()
            let (ua, _) = try await server.vpnLogin(owner)
            let now = Date()
            var rows: [String: UUID] = [:]
            for (index, token) in ["unavailable-a", "quota-a", "sender-a", "malformed-a"].enumerated() {
                let device = DeviceAnonymized(
                    id: UUID(), userAnonymizedID: UUID(uuidString: ua)!, deviceIndex: index + 1,
                    operatingSystem: "IOS", appVersion: "1", appVersionCode: 1, firebaseInstanceID: token)
                try await device.create(on: server.app.db)
                let row = PendingPush(id: UUID(), deviceID: device.id!, messageID: Int64(index + 1), now: now.addingTimeInterval(-1))
                try await row.create(on: server.app.db)
                rows[token] = row.id!
            }
            #expect(try await server.app.pushDispatcher.drainOnce() == 4)
            func row(_ token: String) async throws -> PendingPush { try #require(try await PendingPush.find(rows[token]!, on: server.app.db)) }
            let unavailable = try await row("unavailable-a")
            #expect(unavailable.state == "pending")
            #expect(unavailable.lastError == "UNAVAILABLE")
            #expect(unavailable.nextAttemptAt.timeIntervalSince(now) >= 6.5)
            let quota = try await row("quota-a")
            #expect(quota.state == "pending")
            #expect(quota.nextAttemptAt.timeIntervalSince(now) >= 59)
            #expect(try await row("sender-a").state == "failed")
            #expect(try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "sender-a").count() == 1, "kept")
            #expect(try await row("malformed-a").state == "failed")
            #expect(try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "malformed-a").count() == 0, "cleared")
            // nothing is due before its time; past the maximum age a retry becomes a failure
            // (a fixed clock: on a loaded machine the 7 s may have passed by now)
            #expect(try await server.app.pushDispatcher.drainOnce(now: now.addingTimeInterval(5)) == 0)
            var short = server.app.pushDispatcher
            short = PushDispatcher(
                db: short.db, provider: short.provider, settings: PushSettings(maxAgeSeconds: 5),
                publicBaseURL: short.publicBaseURL, skipLocked: short.skipLocked, logger: short.logger)
            // (The retry is due after its backoff from when the first round finished, which a loaded CI machine once
            // put more than 20 s after `now`: the second round runs past that, before the quota row's minute.)
            let later = max(now.addingTimeInterval(20), try await row("unavailable-a").nextAttemptAt.addingTimeInterval(1))
            #expect(try await short.drainOnce(now: later) == 1)
            #expect(try await row("unavailable-a").state == "failed")
        }
        await emulator.stop()
    }

    /// A dead-token answer clears the token only if the app has not sent a new one meanwhile (compare-and-set).
    @Test(arguments: TestDatabase.available)
    func aTokenReplacedWhileItsPushWasInFlightSurvives(db: TestDatabase) async throws {
        let emulator = try await FCMEmulator.start()
        try await withServer(db, adjust: try emulator.configure(workers: false)) { server in
            let user = try await server.createUser(extra: BuddyTests.phone("unregistered-old"))
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let device = try #require(try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "unregistered-old").first())
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: 77, now: Date().addingTimeInterval(-1)).create(on: server.app.db)
            // the push is in flight with the old token when the app sends a new one
            emulator.setHanging(true, thenAnswer: true)
            let drain = Task { try await server.app.pushDispatcher.drainOnce() }
            for _ in 0..<200 where emulator.hungRequests == 0 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(emulator.hungRequests == 1)
            _ = try await server.request(
                .PUT, "\(user.path)/devices/\(deviceID)", headers: user.passwordHeader,
                json: ["name": "Phone", "firebaseInstanceId": "ok-new"])
            emulator.setHanging(false)
            #expect(try await drain.value == 1)
            // the old token's UNREGISTERED did not wipe the new one
            let (_, after) = try await DevicesTests.firstDevice(server, user)
            #expect(after["firebaseInstanceId"] as? String == "ok-new")
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$messageID == 77).first()?.lastError == "UNREGISTERED")
        }
        await emulator.stop()
    }

    @Test func retryAfterInSecondsOrAsAnHTTPDate() {
        #expect(FCMPushProvider.retryAfter("120") == 120)
        let inTwoMinutes = Date().addingTimeInterval(120)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let parsed = try! #require(FCMPushProvider.retryAfter(formatter.string(from: inTwoMinutes)))
        #expect(abs(parsed - 120) < 3)
        #expect(FCMPushProvider.retryAfter(nil) == nil)
        #expect(FCMPushProvider.retryAfter("soon") == nil)
    }

    @Test func aBadServiceAccountStopsStartUpWithOneLine() {
        #expect(throws: AppConfig.Invalid.self) { try FCMServiceAccount.load(path: "/nonexistent/sa.json") }
        #expect(throws: AppConfig.Invalid.self) { try AppConfig.fromEnvironment(["YONA_PUSH_PROVIDER": "fcm"]) }
    }

    /// The story, through the real client, ends on the emulator: one valid, content-free push per phone;
    /// dead tokens are cleared and transient failures retried.
    @Test(arguments: TestDatabase.available)
    func conflictPushesReachFirebase(db: TestDatabase) async throws {
        let emulator = try await FCMEmulator.start()
        try await withServer(db, adjust: try emulator.configure(workers: true)) { server in
            let richard = try await server.createUser(nickname: "Dad", extra: BuddyTests.phone("ok-richard"))
            let bob = try await server.createUser(firstName: "Bobbert", nickname: "Bobby", extra: BuddyTests.phone("ok-bob"))
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            _ = try await server.messages(richard)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(bob)
            try await PushTests.drained(server)
            let before = (emulator.messages(to: "ok-bob").count, emulator.messages(to: "ok-richard").count)

            try await server.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/fcm")
            try await PushTests.drained(server)

            let own = try #require(try await server.messages(bob).first?["messageId"] as? Int)
            let copy = try #require(try await server.messages(richard).first?["messageId"] as? Int)
            let schema = try JSONSchema.load("push-message.schema.json")
            for (token, expected, earlier) in [("ok-bob", own, before.0), ("ok-richard", copy, before.1)] {
                let received = emulator.messages(to: token)
                #expect(received.count == earlier + 1, "exactly one push for the conflict on \(token)")
                let body = try #require(received.last)
                #expect(schema.violations(of: body).isEmpty)
                let text = String(decoding: body, as: UTF8.self)
                #expect(text.contains("\"messageId\":\"\(expected)\""))
                #expect(!text.contains("notification"))
                for secret in [bob.id, bob.mobileNumber, "Bobbert", "Bobby", "poker", "gambling", "Gambling", ua] {
                    #expect(!text.contains(secret), "the push carries \(secret)")
                }
            }
            // a dead token is cleared on its device (and only there)
            let (deviceID, _) = try await DevicesTests.firstDevice(server, richard)
            _ = try await server.request(
                .PUT, "\(richard.path)/devices/\(deviceID)", headers: richard.passwordHeader,
                json: ["name": "Phone", "firebaseInstanceId": "unregistered-richard"])
            try await server.postNetworkActivity(
                ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/again",
                at: Date().addingTimeInterval(-7200))
            try await PushTests.drained(server)
            let (_, device) = try await DevicesTests.firstDevice(server, richard)
            #expect(device["firebaseInstanceId"] == nil, "the dead token was cleared")
            let (_, bobsDevice) = try await DevicesTests.firstDevice(server, bob)
            #expect(bobsDevice["firebaseInstanceId"] as? String == "ok-bob")
            let metrics = try await server.request(.GET, "/metrics").text
            #expect(metrics.contains("yona_push_tokens_cleared_total{reason=\"UNREGISTERED\"} 1"))
            #expect(metrics.contains("yona_fcm_oauth_refreshes_total 1"))
            #expect(metrics.contains("yona_fcm_request_duration_seconds_count"))
        }
        await emulator.stop()
    }
}
