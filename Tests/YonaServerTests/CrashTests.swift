import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer

/// push.md "A crash or restart loses nothing": the real `yona-server` executable is killed with SIGKILL while
/// Firebase hangs, then restarted; the claimed push is sent again after its lease, exactly once.
@Suite struct CrashTests {
    /// A server process's database file and port, and what every crash test gives it: a test server, a 2 s lease,
    /// cheap key derivation, warnings only.
    struct CrashedServer {
        let database: String
        let port: Int
        var base: String { "http://127.0.0.1:\(port)" }

        init(_ name: String) throws {
            database = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
            port = try TestServerProbe.freePort()
        }

        func environment(_ extra: [String: String]) -> [String: String] {
            [
                "YONA_DATABASE_URL": "sqlite://\(database)", "YONA_PORT": String(port), "YONA_TEST_SERVER": "true",
                "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning",
                "YONA_PUSH_LEASE_SECONDS": "2", "YONA_KDF_OPSLIMIT": "1", "YONA_KDF_MEMLIMIT": "8192",
            ].merging(extra) { $1 }
        }

        func removeDatabase() {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
    }

    /// `yona-server serve` as its own process, its output dropped.
    static func server(environment: [String: String]) throws -> ChildProcess {
        try ChildProcess.server(["serve"], environment: environment)
    }

    static func waitUntilHealthy(_ base: String) async throws {
        for _ in 0..<200 {
            if let status = try? await TestServerProbe.status("\(base)/health"), status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSetupError(description: "yona-server did not come up")
    }

    @Test func aKilledServerLosesNoPushAndSendsNoneTwice() async throws {
        // setup: an emulator, a database file, and the server as a real process
        let emulator = try await FCMEmulator.start()
        let process = try CrashedServer("yona-crash")
        defer { process.removeDatabase() }
        let base = process.base
        let environment = process.environment([
            "YONA_FCM_SERVICE_ACCOUNT": try emulator.serviceAccountFile(),
            "YONA_FCM_ENDPOINT": emulator.baseURL,
        ])
        var server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)
        let client = TestServerProbe(baseURL: base)

        // a user with a danger zone and a phone; Firebase stops answering; the visit is reported
        let user = try await client.createUser(extra: BuddyTests.phone("ok-crash"))
        try await client.addNoGoGoal(user, category: GoalsTests.gambling)
        let (anonymizedID, _) = try await client.vpnLogin(user)
        emulator.setHanging(true)
        let posted = try await client.postNetworkActivity(anonymizedID, categories: ["gambling"], url: "https://poker.example/crash")
        #expect(posted.status == 204)
        for _ in 0..<150 where emulator.hungRequests == 0 { try await Task.sleep(for: .milliseconds(100)) }
        #expect(emulator.hungRequests == 1, "the worker has claimed the row and is waiting on Firebase")

        // act: kill -9, Firebase recovers, restart
        server.kill9()
        emulator.setHanging(false)
        #expect(emulator.messages(to: "ok-crash").isEmpty)
        server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)

        // check: after the lease the push goes out, once
        for _ in 0..<100 where emulator.messages(to: "ok-crash").isEmpty {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(3))
        #expect(emulator.messages(to: "ok-crash").count == 1)
        server.kill9()
        await emulator.stop()
    }

    /// A push to a Web Push subscription, as one to Firebase: the server is killed while the push service holds the
    /// push, restarted, and after the lease the push goes out (encrypted afresh), once.
    @Test func aKilledServerLosesNoWebPushAndSendsNoneTwice() async throws {
        let webPush = try await WebPushEmulator.start()
        let process = try CrashedServer("yona-crash")
        defer { process.removeDatabase() }
        let base = process.base
        let environment = process.environment([
            "YONA_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS": "true"
        ])
        var server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)
        let client = TestServerProbe(baseURL: base)

        // a user whose phone has a Web Push subscription; the push service stops answering; the visit is reported
        var phone = BuddyTests.phone("unused")
        phone["deviceFirebaseInstanceId"] = nil
        phone["deviceWebPushSubscription"] = DirectPushTests.json(webPush.subscribe("ok-crash"))
        let user = try await client.createUser(extra: phone)
        try await client.addNoGoGoal(user, category: GoalsTests.gambling)
        let (anonymizedID, _) = try await client.vpnLogin(user)
        webPush.setHanging(true)
        let posted = try await client.postNetworkActivity(anonymizedID, categories: ["gambling"], url: "https://poker.example/crash")
        #expect(posted.status == 204)
        for _ in 0..<150 where webPush.hungRequests == 0 { try await Task.sleep(for: .milliseconds(100)) }
        #expect(webPush.hungRequests == 1, "the worker has claimed the row and is waiting on the push service")

        // act: kill -9, the push service recovers, restart
        server.kill9()
        webPush.setHanging(false)
        #expect(webPush.plaintexts("ok-crash").isEmpty)
        server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)

        // check: after the lease the push goes out, once
        for _ in 0..<100 where webPush.plaintexts("ok-crash").isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .seconds(3))
        #expect(webPush.plaintexts("ok-crash").count == 1)
        #expect(webPush.problems.isEmpty, "\(webPush.problems)")
        server.kill9()
        await webPush.stop()
    }

    /// issue 13: the text outbox as the push outbox: the real executable is killed with SIGKILL while the SMS gateway
    /// holds the text, then restarted; after the lease the text goes out, once.
    @Test func aKilledServerLosesNoTextAndSendsNoneTwice() async throws {
        let gateway = try await SMSGatewayTests.Gateway()
        let process = try CrashedServer("yona-crash-sms")
        defer { process.removeDatabase() }
        let base = process.base
        let environment = process.environment([
            "YONA_SMS_PROVIDER": "http", "YONA_SMS_GATEWAY_URL": gateway.url, "YONA_PUBLIC_BASE_URL": base,
        ])
        var server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)

        // a new account's confirmation code is on its way when the gateway stops answering
        gateway.hang.withLockedValue { $0 = true }
        let number = randomMobileNumber()
        let creating = Task {
            try? await TestServerProbe(baseURL: base).request(
                .POST, "/users/", json: ["firstName": "Crash", "lastName": "Test", "nickname": "CT", "mobileNumber": number])
        }
        for _ in 0..<150 where gateway.hung.withLockedValue({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(100)) }
        try #require(gateway.hung.withLockedValue { $0 } == 1, "the request is sending the text")

        // act: kill -9, the gateway recovers, restart
        server.kill9()
        _ = await creating.value
        gateway.hang.withLockedValue { $0 = false }
        server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)

        // check: after the lease the text goes out, once (waiting up to 30 s: the whole suite shares two cores, and
        // this checks that nothing is lost or doubled, not how soon it goes)
        func delivered() -> Int { gateway.texts(to: number).filter(\.accepted).count }
        for _ in 0..<300 where delivered() == 0 { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .seconds(3))
        #expect(delivered() == 1)
        #expect(gateway.texts(to: number).filter(\.accepted).first?.body["text"]?.hasPrefix("Your Yona confirmation code: ") == true)
        server.kill9()
        await gateway.stop()
    }

    /// issue 30: the same through a real provider's API (Plivo's emulator): killed with SIGKILL while Plivo holds the
    /// text, restarted; after the lease the text goes out, once.
    @Test func aKilledServerLosesNoPlivoTextAndSendsNoneTwice() async throws {
        let plivo = try await SMSProviderEmulator.start()
        let process = try CrashedServer("yona-crash-plivo")
        defer { process.removeDatabase() }
        let base = process.base
        let environment = process.environment([
            "YONA_SMS_PROVIDER": "plivo", "YONA_PLIVO_AUTH_ID": SMSProviderEmulator.plivoAuthID,
            "YONA_PLIVO_AUTH_TOKEN": SMSProviderEmulator.authToken,
            "YONA_PLIVO_API_URL": plivo.baseURL, "YONA_SMS_FROM": "+31850000000", "YONA_PUBLIC_BASE_URL": base,
        ])
        var server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)

        // a new account's confirmation code is at Plivo when Plivo stops answering
        plivo.state.withLockedValue { $0.hanging = true }
        let number = randomMobileNumber()
        let creating = Task {
            try? await TestServerProbe(baseURL: base).request(
                .POST, "/users/", json: ["firstName": "Crash", "lastName": "Test", "nickname": "CT", "mobileNumber": number])
        }
        for _ in 0..<150 where plivo.state.withLockedValue({ $0.hung }) == 0 { try await Task.sleep(for: .milliseconds(100)) }
        try #require(plivo.state.withLockedValue { $0.hung } == 1, "the request is sending the text")

        // act: kill -9, Plivo recovers, restart
        server.kill9()
        _ = await creating.value
        plivo.state.withLockedValue { $0.hanging = false }
        server = try Self.server(environment: environment)
        try await Self.waitUntilHealthy(base)

        // check: after the lease the text goes out, once (waiting up to 30 s on the suite's two shared cores)
        func delivered() -> [SMSProviderEmulator.Received] { plivo.texts(to: number).filter(\.accepted) }
        for _ in 0..<300 where delivered().isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .seconds(3))
        #expect(delivered().count == 1)
        #expect(delivered().first?.text?.hasPrefix("Your Yona confirmation code: ") == true)
        server.kill9()
        await plivo.stop()
    }
}
