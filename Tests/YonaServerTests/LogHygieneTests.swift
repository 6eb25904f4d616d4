import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer

/// privacy.md "What leaves the server", logs: the real executable, at its most verbose level, plays every
/// flow that carries a secret; its whole output is then searched for each of them.
@Suite struct LogHygieneTests {
    @Test func aFullScenarioLogsNoSecretNumberNameTokenOrURL() async throws {
        // setup: the server as a process whose stdout and stderr go to a file
        let logged = try await LoggedServer.start(
            ["serve"],
            environment: ["YONA_LOG_LEVEL": "trace", "YONA_KDF_OPSLIMIT": "1", "YONA_KDF_MEMLIMIT": "8192", "YONA_PUSH_POLL_INTERVAL": "0.1"])
        defer { logged.remove() }
        let (process, logFile, server) = (logged.process, logged.logFile, logged.server)

        // act: every flow that handles a secret
        var secrets: [String] = []
        let marker = "Lq\(UInt32.random(in: 100_000...999_999))"
        let richard = try await server.createUser(
            firstName: "Rupert\(marker)", nickname: "Rup\(marker)",
            extra: BuddyTests.phone("fiid-richard-\(marker)"))
        let bob = try await server.createUser(
            firstName: "Bartholomew\(marker)", nickname: "Bart\(marker)",
            extra: BuddyTests.phone("fiid-bob-\(marker)"))
        secrets += [
            richard.password, bob.password, richard.mobileNumber, bob.mobileNumber, richard.firstName, "Ln\(richard.firstName)",
            richard.nickname, bob.firstName, bob.nickname, "fiid-richard-\(marker)", "fiid-bob-\(marker)", richard.id, bob.id,
        ]
        let wrongCode = try await server.request(
            .POST, "\(richard.path)/confirmMobileNumber", headers: richard.passwordHeader, json: ["code": "9876"])
        let correlationID = try #require(wrongCode.headers.first(name: "X-Correlation-Id"))
        _ = try await server.request(.GET, richard.profilePath, headers: [("Yona-Password", "wrong-\(marker)")])
        secrets.append("wrong-\(marker)")
        // the new-device flow with its one-time password
        let otp = "Otp\(marker)"
        secrets.append(otp)
        let requestPath = NewDeviceRequestTests.requestPath(richard.mobileNumber)
        _ = try await server.request(.PUT, requestPath, headers: richard.passwordHeader, json: ["newDeviceRequestPassword": otp])
        _ = try await server.request(.GET, requestPath, headers: [("Yona-NewDeviceRequestPassword", otp)])
        let registered = try await server.request(
            .POST, "\(richard.path)/devices/", headers: [("Yona-NewDeviceRequestPassword", otp)],
            json: [
                "name": "Tablet", "operatingSystem": "ANDROID", "appVersion": "1.0", "appVersionCode": 1,
                "firebaseInstanceId": "fiid-tablet-\(marker)",
            ])
        #expect(registered.status == 201, "\(registered.text)")
        secrets.append("fiid-tablet-\(marker)")
        // buddies, an invitation to a number without an account, a danger zone, disclosure
        try await BuddyTests.connect(server, richard: richard, bob: bob)
        let invitee = randomMobileNumber()
        secrets += [invitee, "Ivo\(marker)", "ivo-\(marker)@example.com"]
        _ = try await server.request(
            .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
            json: [
                "_embedded": [
                    "yona:user": ["firstName": "Ivo\(marker)", "lastName": "X", "mobileNumber": invitee, "emailAddress": "ivo-\(marker)@example.com"]
                ],
                "message": "Join me \(marker)", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
            ])
        let mail = try await server.request(.GET, "/test/emails/last")
        let link = try #require((mail.json["body"] as? String)?.components(separatedBy: "tempPassword=").last?.prefix { $0 != "\"" })
        secrets += [String(link), "Join me \(marker)"]
        try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
        let login = try await server.vpnLogin(bob)
        let url = "https://poker-\(marker).example/table?player=\(marker)"
        secrets += [url, "poker-\(marker)", login.userAnonymizedID]
        let visit = try await server.postNetworkActivity(login.userAnonymizedID, categories: ["gambling"], url: url)
        try #require(visit.status == 204, "visit: \(visit.status) \(visit.text)")
        let copy = try #require(try await server.messages(richard).first { $0["@type"] as? String == "GoalConflictMessage" })
        _ = try await server.request(
            .POST, try #require(value(copy, "_links", "yona:requestDisclosure", "href") as? String),
            headers: richard.passwordHeader, json: ["properties": ["message": "Tell me \(marker)"]])
        // the workers must have pushed something before the accounts (and their queued pushes) go
        var pushed = false
        for _ in 0..<100 where !pushed {
            pushed = try await server.request(.GET, "/test/firebase/messages/last/fiid-richard-\(marker)").status == 200
            if !pushed { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(pushed, "a push to Richard's phone within 10 s")
        _ = try await server.request(.GET, "/test/firebase/messages/last/fiid-bob-\(marker)")
        // an announcement, a lost-phone overwrite, a goodbye
        _ = try await server.request(.POST, "/admin/systemMessages/", headers: TestServer.bearer, json: ["translations": ["en-US": "Hello"]])
        let encoded = bob.mobileNumber.replacingOccurrences(of: "+", with: "%2B")
        _ = try await server.request(.POST, "/admin/requestUserOverwrite/?mobileNumber=\(encoded)")
        let overwritten = try await server.request(
            .POST, "/users/?overwriteUserConfirmationCode=1234",
            json: [
                "firstName": "Bert\(marker)", "lastName": "Y", "nickname": "Be\(marker)", "mobileNumber": bob.mobileNumber,
            ])
        #expect(overwritten.status == 201, "\(overwritten.text)")
        secrets += ["Bert\(marker)", "Be\(marker)", try #require(overwritten.json["yonaPassword"] as? String)]
        _ = try await server.messages(richard)
        _ = try await server.request(.DELETE, richard.path, headers: richard.passwordHeader)
        try await Task.sleep(for: .seconds(1)) // the workers send what was queued

        // check: the log is real and holds none of it
        process.signal(SIGTERM)
        _ = try await ExternalTool.detached { process.wait() }
        let log = try String(contentsOf: logFile, encoding: .utf8)
        #expect(log.contains("POST /users 201"), "the access log should be in the capture")
        // the logger's metadata reaches the lines: the access line of the wrong code carries its correlation id
        #expect(
            log.split(separator: "\n").contains { $0.contains("correlation_id=\(correlationID)") && $0.contains("confirmMobileNumber 400") },
            "the access line names its correlation id")
        #expect(log.contains("push"), "the push workers should have logged")
        let lines = log.split(separator: "\n")
        for secret in secrets {
            let leaks = lines.filter { $0.contains(secret) }
            #expect(leaks.isEmpty, "the log holds \(secret): \(leaks.prefix(2))")
        }
        // The 4-digit codes, wherever they stand alone (not inside a longer number such as a duration, nor inside a
        // random hexadecimal id such as a request or correlation id).
        for code in ["9876", "1234"] {
            let leaks = lines.filter { line in
                line.ranges(of: code).contains { range in
                    let before = range.lowerBound > line.startIndex ? line[line.index(before: range.lowerBound)] : " "
                    let after = range.upperBound < line.endIndex ? line[range.upperBound] : " "
                    let partOfAnother: (Character) -> Bool = { $0.isHexDigit || $0 == "." || $0 == "-" }
                    return !partOfAnother(before) && !partOfAnother(after)
                }
            }
            #expect(leaks.isEmpty, "the log holds the code \(code): \(leaks.prefix(2))")
        }
    }

    /// Lines are written in batches (`StandardOutputLines`), but within a moment, not only when the process ends: the
    /// access lines of requests show in the output of a server that still runs, and are there after a SIGKILL,
    /// which runs no exit handler.
    @Test func linesReachTheOutputWhileTheServerRuns() async throws {
        let logged = try await LoggedServer.start(["serve", "--no-workers"])
        defer { logged.remove() }
        for _ in 0..<50 { _ = try await logged.server.request(.GET, "/health") }
        _ = try await logged.server.request(.GET, "/nothing-here")
        var log = ""
        for _ in 0..<100 where log.components(separatedBy: "GET /health 200").count < 51 || !log.contains("(unmatched) 404") {
            try await Task.sleep(for: .milliseconds(20))
            log = logged.output
        }
        #expect(log.components(separatedBy: "GET /health 200").count >= 51, "every access line within 2 s")
        #expect(log.contains("(unmatched) 404"))
        logged.process.kill9()
        let after = logged.output
        #expect(after.hasPrefix(log) && after.hasSuffix("\n"), "what was written stays, in whole lines")
    }
}

/// The real server as a process on a SQLite file of its own, its standard output and error in a file.
struct LoggedServer {
    let process: ChildProcess
    let logFile: URL
    let server: TestServerProbe
    private let database: String

    static func start(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> LoggedServer {
        let directory = FileManager.default.temporaryDirectory
        let database = directory.appendingPathComponent("yona-logs-\(UUID().uuidString).sqlite").path
        let logFile = directory.appendingPathComponent("yona-logs-\(UUID().uuidString).log")
        let port = try TestServerProbe.freePort()
        let environment = [
            "YONA_DATABASE_URL": "sqlite://\(database)", "YONA_PORT": String(port), "YONA_TEST_SERVER": "true",
            "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey,
        ].merging(extra) { $1 }
        let process = try ChildProcess.server(arguments, environment: environment, output: logFile.path)
        let logged = LoggedServer(
            process: process, logFile: logFile, server: TestServerProbe(baseURL: "http://127.0.0.1:\(port)"), database: database)
        do {
            try await CrashTests.waitUntilHealthy(logged.server.baseURL)
        } catch {
            logged.remove()
            throw error
        }
        return logged
    }

    /// What the process has written so far.
    var output: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Stops the process if it still runs and removes its files.
    func remove() {
        process.kill9()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try? FileManager.default.removeItem(at: logFile)
    }
}
