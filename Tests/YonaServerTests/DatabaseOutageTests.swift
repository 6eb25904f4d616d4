import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer

/// operations.md "Overload": PostgreSQL goes away under requests and comes back. Every request in the outage answers
/// 503 `error.service.unavailable` with `Retry-After` (never a 500), and the server recovers without a restart.
@Suite struct DatabaseOutageTests {
    /// The relay between the server and PostgreSQL (Fixtures/tcp_proxy.py): killing it takes the database away.
    static func relay(port: Int, to target: URLComponents) async throws -> ChildProcess {
        let relay = try ChildProcess(
            "python3", [FCMEmulator.fixture("tcp_proxy.py").path, String(port), target.host ?? "127.0.0.1", String(target.port ?? 5432)])
        for _ in 0..<100 where !Self.listens(port) { try await Task.sleep(for: .milliseconds(50)) }
        return relay
    }

    static func listens(_ port: Int) -> Bool {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    @Test(.enabled(if: TestDatabase.available.contains(.postgres)))
    func requestsDuringAnOutageAnswer503AndTheServerRecovers() async throws {
        let port = try TestServerProbe.freePort()
        let admin = try #require(ProcessInfo.processInfo.environment["YONA_TEST_POSTGRES_URL"])
        let target = try #require(URLComponents(string: admin))
        var relay = try await Self.relay(port: port, to: target)
        defer { relay.kill9() }
        try await withServer(
            .postgres,
            adjust: { config in
                guard case .postgres(let url) = config.database, var through = URLComponents(string: url) else { return }
                through.port = port
                config.database = .postgres(url: through.string!)
            }
        ) { server in
            let user = try await server.createUser()
            #expect(try await server.request(.GET, user.profilePath, headers: user.passwordHeader).status == 200)

            // act: the database goes away; the app keeps asking, in parallel
            relay.kill9()
            let answers = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        index % 2 == 0
                            ? try await server.request(.GET, user.profilePath, headers: user.passwordHeader, timeout: .seconds(60))
                            : try await server.request(.GET, "/activityCategories/", timeout: .seconds(60))
                    }
                }
                return try await group.reduce(into: [APIResponse]()) { $0.append($1) }
            }
            // check: each answer is a 503 the client can act on, none a 500
            for answer in answers {
                #expect(answer.status == 503, "\(answer.status): \(answer.text)")
                #expect(answer.errorCode == "error.service.unavailable")
                #expect(answer.headers.first(name: "Retry-After") == "1")
            }
            #expect(try await server.request(.GET, "/health").status == 200, "the process itself still answers")

            // the database comes back: the same server answers again, without a restart
            relay = try await Self.relay(port: port, to: target)
            var status = 0
            for _ in 0..<100 {
                status = try await server.request(.GET, user.profilePath, headers: user.passwordHeader).status
                if status == 200 { break }
                #expect(status == 503, "while reconnecting: \(status)")
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(status == 200)
        }
    }

    /// A push Firebase accepted while the database was down is not sent again: the drain lets the send end (a sibling's
    /// database failure does not cancel it), keeps trying to finish the row while its lease lasts, and the database is
    /// back in time.
    @Test(.enabled(if: TestDatabase.available.contains(.postgres)))
    func aPushAcceptedDuringAnOutageIsNotSentAgain() async throws {
        let port = try TestServerProbe.freePort()
        let admin = try #require(ProcessInfo.processInfo.environment["YONA_TEST_POSTGRES_URL"])
        let target = try #require(URLComponents(string: admin))
        var relay = try await Self.relay(port: port, to: target)
        defer { relay.kill9() }
        let emulator = try await FCMEmulator.start()
        let configureFCM = try emulator.configure(workers: true)
        try await withServer(
            .postgres,
            adjust: { config in
                configureFCM(&config)
                config.push.leaseSeconds = 6
                guard case .postgres(let url) = config.database, var through = URLComponents(string: url) else { return }
                through.port = port
                config.database = .postgres(url: through.string!)
            }
        ) { server in
            let user = try await server.createUser(extra: BuddyTests.phone("ok-outage"))
            try await server.addNoGoGoal(user, category: GoalsTests.gambling)
            let (anonymizedID, _) = try await server.vpnLogin(user)
            try await PushTests.drained(server)
            let before = emulator.messages(to: "ok-outage").count
            // the conflict's push is in flight, held by Firebase
            emulator.setHanging(true, thenAnswer: true)
            _ = try await server.postNetworkActivity(anonymizedID, categories: ["gambling"], url: "https://poker.example/outage")
            for _ in 0..<150 where emulator.hungRequests == 0 { try await Task.sleep(for: .milliseconds(100)) }
            #expect(emulator.hungRequests == 1)

            // act: the database goes away, then Firebase accepts the push; the database comes back a moment later
            relay.kill9()
            emulator.setHanging(false)
            for _ in 0..<100 where emulator.messages(to: "ok-outage").count == before { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(500))
            relay = try await Self.relay(port: port, to: target)

            // check: well past the lease, Firebase has the push once
            try await Task.sleep(for: .seconds(9))
            #expect(emulator.messages(to: "ok-outage").count == before + 1)
            try await PushTests.drained(server)
        }
        await emulator.stop()
    }
}
