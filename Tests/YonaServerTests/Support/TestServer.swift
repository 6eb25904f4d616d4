import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Testing
import Vapor

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// The databases every store-touching test runs on. PostgreSQL joins when `scripts/test` has started one
/// (`YONA_TEST_POSTGRES_URL`); with `YONA_TEST_REQUIRE_POSTGRES=1` its absence fails the run instead of
/// silently shrinking it.
enum TestDatabase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let available: [TestDatabase] = {
        let env = ProcessInfo.processInfo.environment
        let required = env["YONA_TEST_REQUIRE_POSTGRES"] == "1"
        return env["YONA_TEST_POSTGRES_URL"] != nil || required ? [.sqlite, .postgres] : [.sqlite]
    }()
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
}

/// A real server on a loopback port over a fresh, real database, driven over real HTTP.
final class TestServer: APIDriving {
    let app: Application
    let baseURL: String
    let database: TestDatabase
    /// The SQLite file, or the PostgreSQL URL of this test's own database.
    let databaseLocation: String
    /// The internal listener's base URL when the test asked for one (`config.internalPort = 0`).
    let internalBaseURL: String?
    private let listeners: HTTPListeners
    /// The background jobs, as `serve` runs them, when the test switched the workers on.
    private let jobs: (group: ServiceGroup, task: Task<Void, Never>)?
    private let cleanup: @Sendable () async -> Void

    private init(
        app: Application, baseURL: String, database: TestDatabase, databaseLocation: String, listeners: HTTPListeners,
        jobs: (group: ServiceGroup, task: Task<Void, Never>)?, cleanup: @escaping @Sendable () async -> Void
    ) {
        self.app = app
        self.baseURL = baseURL
        self.database = database
        self.databaseLocation = databaseLocation
        self.listeners = listeners
        self.internalBaseURL = listeners.internalPort.map { "http://127.0.0.1:\($0)" }
        self.jobs = jobs
        self.cleanup = cleanup
    }

    static func start(
        _ database: TestDatabase, sharingDatabaseOf other: TestServer? = nil,
        adjust: (inout AppConfig) -> Void = { _ in }
    ) async throws -> TestServer {
        var config = AppConfig.default
        config.testServer = true
        config.port = 0
        config.kdfLimits = .init(opsLimit: 1, memLimit: 8192)
        // Tests create many users from one address; the rate-limit tests lower these again.
        config.rateLimitPerClientPerMinute = 100_000
        config.rateLimitPerNumberPerHour = 100_000
        config.buddyRequestsPerAccountPerDay = 100_000
        config.internalToken = TestServer.internalToken
        config.recoveryKey = TestServer.recoveryKey
        // Background push workers only where a test asks for them (PushTests): ~140 servers polling at
        // once would only load the two cores.
        config.push.workersEnabled = false
        config.push.pollInterval = 0.1
        // Warnings and errors only, so a failure stands out in the run's output; YONA_TEST_LOG_LEVEL=info shows more.
        config.logLevel = ProcessInfo.processInfo.environment["YONA_TEST_LOG_LEVEL"] ?? "warning"
        let location: String
        let dropDatabase: @Sendable () async -> Void
        switch database {
        case _ where other != nil:
            location = other!.databaseLocation
            config.database = other!.app.yona.config.database
            dropDatabase = {}
        case .sqlite:
            location =
                FileManager.default.temporaryDirectory
                .appendingPathComponent("yona-test-\(UUID().uuidString).sqlite").path
            config.database = .sqlite(path: location)
            dropDatabase = {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: location + suffix) }
            }
        case .postgres:
            guard let admin = ProcessInfo.processInfo.environment["YONA_TEST_POSTGRES_URL"] else {
                throw TestSetupError(description: "YONA_TEST_REQUIRE_POSTGRES=1 but YONA_TEST_POSTGRES_URL is not set")
            }
            let name = "yona_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            try PostgresAdmin.run(sql: "CREATE DATABASE \(name)", adminURL: admin)
            location = PostgresAdmin.url(admin, database: name)
            config.database = .postgres(url: location)
            dropDatabase = { try? PostgresAdmin.run(sql: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)", adminURL: admin) }
        }
        adjust(&config)

        let app = try await Application.make(.testing)
        let listeners: HTTPListeners
        do {
            try await configure(app, config: config)
            try await app.autoMigrate()
            try await app.asyncBoot()
            listeners = HTTPListeners(app)
            try await listeners.start(publicAddress: .hostname("127.0.0.1", port: 0))
        } catch {
            try? await app.asyncShutdown()
            await dropDatabase()
            throw error
        }
        guard let port = listeners.publicPort else {
            throw TestSetupError(description: "server has no port")
        }
        let backgroundJobs = app.backgroundJobs
        let jobs =
            backgroundJobs.isEmpty
            ? nil
            : { () -> (group: ServiceGroup, task: Task<Void, Never>) in
                let group = ServiceGroup(services: backgroundJobs, logger: app.logger)
                return (group, Task { try? await group.run() })
            }()
        return TestServer(
            app: app, baseURL: "http://127.0.0.1:\(port)", database: database,
            databaseLocation: location, listeners: listeners, jobs: jobs, cleanup: dropDatabase)
    }

    static let internalToken = "test-internal-token-0123456789"
    /// 32 bytes in base64url; a fixed one, so two instances on one database agree and no key file is written.
    static let recoveryKey = "dGVzdC1yZWNvdmVyeS1rZXktMDEyMzQ1Njc4OWFiY2Q"
    static var bearer: [(String, String)] { [("Authorization", "Bearer \(internalToken)")] }

    func stop() async {
        if let jobs {
            await jobs.group.triggerGracefulShutdown()
            await jobs.task.value
        }
        await listeners.shutdown()
        try? await app.asyncShutdown()
        await cleanup()
    }

}

/// Runs `body` against a fresh server and always tears it down.
func withServer(
    _ database: TestDatabase, adjust: (inout AppConfig) -> Void = { _ in },
    _ body: (TestServer) async throws -> Void
) async throws {
    let server = try await TestServer.start(database, adjust: adjust)
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

struct APIResponse: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: Data

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The contract's error code of an error body.
    var errorCode: String? { json["code"] as? String }
}

/// Reads a value at a path of keys and array indexes, e.g. `["_embedded", "yona:devices", "_embedded", "yona:devices", 0]`.
func value(_ root: Any?, _ path: Any...) -> Any? {
    var current = root
    for step in path {
        switch step {
        case let key as String: current = (current as? [String: Any])?[key]
        case let index as Int:
            guard let array = current as? [Any], array.indices.contains(index) else { return nil }
            current = array[index]
        default: return nil
        }
    }
    return current
}

/// psql and pg_dump against the throwaway PostgreSQL that scripts/test started.
enum PostgresAdmin {
    /// An application configured as a command run is (no listeners, no workers), on the PostgreSQL database at `url`.
    static func commandApplication(on url: String) async throws -> Application {
        let app = try await Application.make(.testing)
        var config = AppConfig.default
        config.database = .postgres(url: url)
        config.internalToken = TestServer.internalToken
        config.recoveryKey = TestServer.recoveryKey
        config.logLevel = "critical"
        try await configure(app, config: config, mode: .command)
        return app
    }

    static func url(_ adminURL: String, database: String) -> String {
        var components = URLComponents(string: adminURL)!
        components.path = "/" + database
        return components.string!
    }

    static func run(sql: String, adminURL: String) throws {
        _ = try tool("psql", [adminURL, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
    }

    static func dump(_ url: String) throws -> Data {
        try tool("pg_dump", ["--no-owner", url])
    }

    static func tool(_ name: String, _ arguments: [String]) throws -> Data {
        try ExternalTool.run(name, arguments)
    }
}

/// The command-line tools tests drive (psql, pg_dump, openssl), found on the PATH.
enum ExternalTool {
    /// Starts a daemon that forks itself into the background (slapd) and waits for the starting process only: the
    /// daemon keeps none of the tests' pipes and sockets (`ChildProcess` spawns with every other descriptor closed).
    static func daemon(_ path: String, _ arguments: [String]) throws {
        let status = try ChildProcess(path, arguments).wait()
        guard status == 0 else { throw TestSetupError(description: "\(path) exited with status \(status)") }
    }

    /// Runs blocking work (a child process waited for, a tool, a poll) on a thread of its own. Swift's cooperative
    /// pool has one thread per core (two here): a test that blocks one while another test blocks the other stalls
    /// every in-process server's handlers, the FCM emulator's among them, until requests time out.
    static func detached<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Runs the tool to its end and returns what it printed; a non-zero exit throws with what it printed on stderr.
    static func run(_ name: String, _ arguments: [String]) throws -> Data {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("yona-tool-\(UUID().uuidString)").path
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        let status = try ChildProcess(name, arguments, output: base + ".out", errors: base + ".err").wait()
        let data = FileManager.default.contents(atPath: base + ".out") ?? Data()
        guard status == 0 else {
            let errors = FileManager.default.contents(atPath: base + ".err") ?? Data()
            throw TestSetupError(description: "\(name) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return data
    }
}

/// Anything the tests talk to over HTTP: an in-process `TestServer` or a server running as its own process.
protocol APIDriving: Sendable {
    var baseURL: String { get }
}

private let errorSchema = try! JSONSchema.load("error.schema.json")

extension APIDriving {
    /// Sends one request and collects the whole answer. The deadline only catches a hang: the whole suite runs its
    /// servers in parallel on two cores, where a request behind several Argon2id derivations once took over 30 s
    /// (tests check what is answered, never how fast). `timeout` longer for tests that queue many requests behind
    /// one lock on purpose (correctness under contention, not speed).
    func request(
        _ method: NIOHTTP1.HTTPMethod, _ path: String, headers: [(String, String)] = [],
        json: Any? = nil, body: Data? = nil, contentType: String? = "application/json", timeout: TimeAmount = .seconds(90)
    ) async throws -> APIResponse {
        var request = HTTPClientRequest(url: path.hasPrefix("http") ? path : baseURL + path)
        request.method = method
        // A connection per request: the shared client's pool is keyed by host and port, and a kept-alive connection to
        // a stopped test server whose app had not shut down yet carried a later server's requests when that server got
        // the same port (a rate-limit test's lookups were answered by a server with the default limits).
        request.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let payload = try json.map { try JSONSerialization.data(withJSONObject: $0) } ?? body
        if let payload {
            if let contentType { request.headers.replaceOrAdd(name: "Content-Type", value: contentType) }
            request.body = .bytes(ByteBuffer(data: payload))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        let answer = APIResponse(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
        if answer.status >= 400, answer.headers.first(name: "Content-Type")?.hasPrefix("text/html") != true {
            // Every error any test provokes must match the contract's error body (the console's pages are HTML).
            let violations = errorSchema.violations(of: answer.body)
            #expect(violations.isEmpty, "error body of \(method) \(path) violates Schemas/error.schema.json: \(violations)")
        }
        return answer
    }
}

/// A server started as a separate process, reached only over HTTP.
struct TestServerProbe: APIDriving {
    let baseURL: String

    static func status(_ url: String) async throws -> Int {
        Int(try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(2)).status.code)
    }

    static func freePort() throws -> Int {
        let output = try PostgresAdmin.tool(
            "python3", ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"])
        guard let port = Int(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestSetupError(description: "no free port")
        }
        return port
    }
}
