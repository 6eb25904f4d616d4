import Fluent
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import ServiceLifecycle
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer
@testable import YonaStore

/// issue 16, operations.md: the process model. `serve` is one `ServiceGroup` (the listeners and each background
/// job a service); the internal listener keeps the analyzer and admin APIs and `/metrics` off the public port;
/// SIGTERM lets a push round finish; a failing job is logged, counted and comes back.
@Suite struct ProcessModelTests {
    /// The real executable, its whole output in a file.
    final class LoggedProcess {
        let process: ChildProcess
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("yona-process-\(UUID().uuidString).log")

        init(_ arguments: [String], environment: [String: String]) throws {
            process = try ChildProcess.server(arguments, environment: environment, output: logFile.path)
        }

        var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

        /// Waits up to `seconds` for the process to end; returns its status, or nil if it still runs.
        func exitStatus(within seconds: Double) async throws -> Int32? {
            try await process.exitCode(within: seconds)
        }

        func stop() {
            process.kill9()
            try? FileManager.default.removeItem(at: logFile)
        }
    }

    static func environment(database: String, port: Int) -> [String: String] {
        [
            "YONA_DATABASE_URL": "sqlite://\(database)", "YONA_PORT": String(port), "YONA_TEST_SERVER": "true",
            "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "info",
            "YONA_KDF_OPSLIMIT": "1", "YONA_KDF_MEMLIMIT": "8192",
        ]
    }

    /// `serve` as its own process on a fresh SQLite file, healthy, with one confirmed user whose phone has the Instance
    /// ID `instanceID`; `stop()` kills it and removes its files.
    struct ServedUser {
        let server: LoggedProcess
        let database: String
        let client: TestServerProbe
        let user: TestUser
        let anonymizedID: String
        let deviceIndex: Int

        func stop() {
            server.stop()
            ProcessModelTests.removeDatabase(database)
        }
    }

    static func serveWithUser(_ instanceID: String, environment extra: [String: String]) async throws -> ServedUser {
        let database = CommandTests.temporaryDatabase()
        let port = try TestServerProbe.freePort()
        let server = try LoggedProcess(["serve"], environment: environment(database: database, port: port).merging(extra) { $1 })
        do {
            let client = TestServerProbe(baseURL: "http://127.0.0.1:\(port)")
            try await CrashTests.waitUntilHealthy(client.baseURL)
            let user = try await client.createUser(extra: BuddyTests.phone(instanceID))
            let (anonymizedID, deviceIndex) = try await client.vpnLogin(user)
            return ServedUser(server: server, database: database, client: client, user: user, anonymizedID: anonymizedID, deviceIndex: deviceIndex)
        } catch {
            server.stop()
            removeDatabase(database)
            throw error
        }
    }

    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Vapor clears an application's storage when it shuts down; a request still in its handler then (a client that
    /// gave up, a SIGTERM under load) reads the services and must get them, not trap the whole process.
    @Test func aRequestThatOutlivesItsApplicationDoesNotTrap() async throws {
        let server = try await TestServer.start(.sqlite)
        let app = server.app
        await server.stop()
        #expect(app.yona.config.testServer, "the services are still there for the request in flight")
    }

    @Test func theListenersAndTheLogFormatAreConfiguredWithOneLineErrors() throws {
        let embedded = try AppConfig.fromEnvironment([:])
        #expect(embedded.internalPort == nil && embedded.logFormat == .text, "one port and text lines by default")
        let split = try AppConfig.fromEnvironment(["YONA_INTERNAL_PORT": "9090", "YONA_INTERNAL_HOST": "10.0.0.5", "YONA_LOG_FORMAT": "JSON"])
        #expect(split.internalPort == 9090 && split.internalHost == "10.0.0.5" && split.logFormat == .json)
        for (environment, expected) in [
            (["YONA_INTERNAL_PORT": "nine"], "configuration error: YONA_INTERNAL_PORT must be a port number 1-65535, got 'nine'"),
            (
                ["YONA_INTERNAL_PORT": "8080"],
                "configuration error: YONA_INTERNAL_PORT must differ from YONA_PORT (leave it unset to serve everything on one port)"
            ),
            (["YONA_INTERNAL_HOST": ""], "configuration error: YONA_INTERNAL_HOST must not be empty"),
            (["YONA_LOG_FORMAT": "xml"], "configuration error: YONA_LOG_FORMAT must be 'text' or 'json'"),
        ] {
            #expect(throws: AppConfig.Invalid.self) { try AppConfig.fromEnvironment(environment) }
            do { _ = try AppConfig.fromEnvironment(environment) } catch { #expect(error.description == expected) }
        }
    }

    @Test func eachListenerServesOnlyItsRoutesAndRequestsAreCountedByRoutePattern() async throws {
        // setup: `serve` with an internal listener and JSON log lines
        let database = CommandTests.temporaryDatabase()
        defer { Self.removeDatabase(database) }
        let (port, internalPort) = (try TestServerProbe.freePort(), try TestServerProbe.freePort())
        var environment = Self.environment(database: database, port: port)
        environment["YONA_INTERNAL_PORT"] = String(internalPort)
        environment["YONA_LOG_FORMAT"] = "json"
        let server = try LoggedProcess(["serve"], environment: environment)
        defer { server.stop() }
        let app = TestServerProbe(baseURL: "http://127.0.0.1:\(port)")
        let internalAPI = TestServerProbe(baseURL: "http://127.0.0.1:\(internalPort)")
        try await CrashTests.waitUntilHealthy(app.baseURL)
        try await CrashTests.waitUntilHealthy(internalAPI.baseURL)

        // act: the app's flow on the public port, the classifier's on the internal one
        let user = try await app.createUser()
        #expect(try await app.request(.GET, user.profilePath, headers: user.passwordHeader).status == 200)
        let (ua, index) = try await app.vpnLogin(user)
        let visit = try await internalAPI.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/")
        #expect(visit.status == 204, "\(visit.text)")
        #expect(try await app.messages(user).first?["@type"] as? String == "GoalConflictMessage")

        // check: each side answers an unknown path for the other's routes, whatever the credentials
        let onPublic = try await app.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/")
        #expect(onPublic.status == 404 && onPublic.errorCode == "error.request.unknown.path", "\(onPublic.status) \(onPublic.text)")
        for path in ["/metrics", "/admin/systemMessages/"] {
            let answer = try await app.request(.GET, path, headers: TestServer.bearer)
            #expect(answer.status == 404 && answer.errorCode == "error.request.unknown.path", "\(path): \(answer.status)")
        }
        let appRouteOnInternal = try await internalAPI.request(.GET, user.profilePath, headers: user.passwordHeader)
        #expect(appRouteOnInternal.status == 404 && appRouteOnInternal.errorCode == "error.request.unknown.path")
        #expect(try await internalAPI.request(.GET, "/ready").status == 200)

        // Vapor's own request metrics, by route pattern, and the jobs' health, on the internal listener
        let metrics = try await internalAPI.request(.GET, "/metrics")
        #expect(metrics.status == 200)
        let counted = metrics.text.split(separator: "\n").filter { $0.hasPrefix("http_requests_total{") }
        #expect(counted.contains { $0.contains("path=\"/users/:userID\"") && $0.contains("status=\"200\"") }, "\(counted)")
        #expect(
            counted.contains { $0.contains("path=\"/userAnonymized/:userAnonymizedID/networkActivity\"") && $0.contains("status=\"204\"") },
            "\(counted)")
        #expect(!counted.contains { $0.contains(user.id) || $0.contains(ua) }, "concrete ids in metric labels: \(counted)")
        #expect(metrics.text.contains("yona_background_job_last_success_timestamp_seconds{job=\"push-outbox\"}"))

        // SIGTERM stops it cleanly; every line it wrote is one JSON object with a level and a message
        server.process.signal(SIGTERM)
        #expect(try await server.exitStatus(within: 30) == 0)
        let lines = server.log.split(separator: "\n")
        #expect(lines.count > 5)
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] is String && object?["message"] is String, "not a JSON log line: \(line)")
        }
        #expect(
            lines.contains { $0.contains("\"message\":\"GET \\/users\\/:userID 200\"") || $0.contains("\"message\":\"GET /users/:userID 200\"") },
            "the access log names the pattern")
        #expect(lines.contains { $0.contains("\"message\":\"stopped\"") })
    }

    @Test func sigtermDuringAPushRoundLetsTheRoundFinishAndLosesNothing() async throws {
        // setup: `serve` pushing to an emulator that holds each send until told to answer
        let emulator = try await FCMEmulator.start()
        let served = try await Self.serveWithUser(
            "ok-sigterm", environment: ["YONA_FCM_SERVICE_ACCOUNT": try emulator.serviceAccountFile(), "YONA_FCM_ENDPOINT": emulator.baseURL])
        defer { served.stop() }
        let (server, client, database, ua, index) = (served.server, served.client, served.database, served.anonymizedID, served.deviceIndex)
        emulator.setHanging(true, thenAnswer: true)
        #expect(try await client.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/").status == 204)
        for _ in 0..<150 where emulator.hungRequests == 0 { try await Task.sleep(for: .milliseconds(100)) }
        try #require(emulator.hungRequests == 1, "the worker is in a round, waiting on Firebase")

        // act: SIGTERM mid-round
        server.process.signal(SIGTERM)

        // check: the public listener closes at once, the process waits for the round, which then finishes
        try await Task.sleep(for: .seconds(1))
        #expect(server.process.isRunning, "the push round in flight holds the shutdown")
        #expect((try? await TestServerProbe.status("\(client.baseURL)/health")) == nil, "no new requests once shutdown began")
        emulator.setHanging(false)
        #expect(try await server.exitStatus(within: 20) == 0, "\(server.log.suffix(2000))")
        #expect(emulator.messages(to: "ok-sigterm").count == 1)
        let states = try PostgresAdmin.tool(
            "python3",
            ["-c", "import sqlite3,sys; print([r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT state FROM push_outbox')])", database])
        #expect(
            String(decoding: states, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "[]",
            "the round recorded what it sent before the process ended")
        await emulator.stop()
    }

    /// Issue 36: a SIGTERM under load once ended in a Swift trap after "stopped". `serve` is stopped in the middle of
    /// profile reads and analyzer posts that raise conflicts (their pushes draining), round after round: it ends with
    /// status 0 every time, and its output holds no trap.
    @Test func sigtermUnderLoadEndsWithStatusZeroEveryTime() async throws {
        for round in 1...4 {
            let served = try await Self.serveWithUser("ok-sigterm-load-\(round)", environment: ["YONA_LOG_LEVEL": "warning"])
            defer { served.stop() }
            let (server, client, user, ua, index) = (served.server, served.client, served.user, served.anonymizedID, served.deviceIndex)

            // act: eight clients read and post without pause; SIGTERM after a while
            let answered = NIOLockedValueBox(0)
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for lane in 0..<8 {
                        group.addTask {
                            var step = 0
                            while !Task.isCancelled {
                                step += 1
                                let moment = Date().addingTimeInterval(-86_400 * 20 + Double(lane * 100_000 + step) * 1_020)
                                let response =
                                    lane % 2 == 0
                                    ? try? await client.request(.GET, user.profilePath, headers: user.passwordHeader, timeout: .seconds(10))
                                    : try? await client.postNetworkActivity(
                                        ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/", at: moment,
                                        timeout: .seconds(10))
                                if let response, response.status < 300 { answered.withLockedValue { $0 += 1 } }
                                if response == nil { try? await Task.sleep(for: .milliseconds(20)) }
                            }
                        }
                    }
                }
            }
            for _ in 0..<100 where answered.withLockedValue({ $0 }) < 40 { try await Task.sleep(for: .milliseconds(50)) }
            server.process.signal(SIGTERM)

            // check
            let status = try await server.exitStatus(within: 30)
            load.cancel()
            await load.value
            #expect(answered.withLockedValue { $0 } >= 40, "round \(round): the load was running")
            #expect(status == 0, "round \(round): \(server.log.suffix(3000))")
            for trap in ["Signal ", "Fatal error", "Program crashed"] {
                #expect(!server.log.contains(trap), "round \(round): \(server.log.suffix(3000))")
            }
        }
    }

    /// Log lines of one job, as a log collector would see them.
    final class CapturedLog: LogHandler, @unchecked Sendable {
        private let lines = NIOLockedValueBox<[(Logger.Level, String, Logger.Metadata)]>([])
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.withLockedValue { $0.append((event.level, "\(event.message)", event.metadata ?? [:])) } }
        var entries: [(Logger.Level, String, Logger.Metadata)] { lines.withLockedValue { $0 } }
    }

    @Test(arguments: TestDatabase.available)
    func aJobWhoseQueryFailsIsLoggedCountedAndRecovers(db: TestDatabase) async throws {
        let emulator = try await FCMEmulator.start()
        try await withServer(db, adjust: try emulator.configure(workers: false)) { server in
            // setup: a conflict whose push waits in the outbox, then the outbox table goes away
            let user = try await server.createUser(extra: BuddyTests.phone("ok-recovers"))
            let (ua, index) = try await server.vpnLogin(user)
            try await server.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/")
            try await server.app.db.sql.raw("ALTER TABLE push_outbox RENAME TO push_outbox_parked").run()
            let captured = CapturedLog()
            var job = try #require(server.app.allBackgroundJobs.first { $0.name == "push-outbox" })
            job.logger = Logger(label: "test") { _ in captured }
            let group = ServiceGroup(services: [job], logger: Logger(label: "test") { _ in captured })
            let running = Task { try await group.run() }

            // act: the job runs against the missing table, which then comes back
            for _ in 0..<100 where captured.entries.filter({ $0.1 == "background job failed" }).count < 2 {
                try await Task.sleep(for: .milliseconds(100))
            }
            let failures = captured.entries.filter { $0.1 == "background job failed" }
            try await server.app.db.sql.raw("ALTER TABLE push_outbox_parked RENAME TO push_outbox").run()
            for _ in 0..<150 where emulator.messages(to: "ok-recovers").isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            // the round that sent it logs its recovery once it returns, a moment after the push arrived
            for _ in 0..<150 where !captured.entries.contains(where: { $0.1 == "background job recovered" }) {
                try await Task.sleep(for: .milliseconds(100))
            }

            // check: logged with the job and its cause, counted, and it recovered by itself
            #expect(failures.count >= 2, "each failed round is logged")
            #expect(failures.allSatisfy { $0.0 == .error && $0.2["job"] == "push-outbox" })
            #expect(failures.allSatisfy { "\($0.2["error"] ?? "")".contains("push_outbox") }, "the cause names what failed: \(failures.map(\.2))")
            let metrics = try await server.request(.GET, "/metrics").text
            let counter = metrics.split(separator: "\n").first { $0.hasPrefix("yona_background_job_failures_total{job=\"push-outbox\"}") }
            #expect(counter.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 >= 2 } == true, "\(counter ?? "no failure counter")")
            #expect(emulator.messages(to: "ok-recovers").count == 1, "the job came back and sent the waiting push")
            #expect(captured.entries.contains { $0.1 == "background job recovered" })
            await group.triggerGracefulShutdown()
            try await running.value
        }
        await emulator.stop()
    }
}
