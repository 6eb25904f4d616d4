import Foundation
import Testing
@testable import YonaServer

/// operations.md "Executable": the operator's commands, run as the real executable.
@Suite struct CommandTests {
    /// Runs `yona-server` with arguments and environment; returns exit status and standard output.
    static func run(_ arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = try CrashTests.ServerProcess.executable()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func pushTestSendsOneContentFreePushAndPrintsTheAnswer() async throws {
        let emulator = try await FCMEmulator.start()
        let environment = ["YONA_FCM_SERVICE_ACCOUNT": try emulator.serviceAccountFile(), "YONA_FCM_ENDPOINT": emulator.baseURL,
                           "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning",
                           "YONA_DATABASE_URL": "sqlite://\(FileManager.default.temporaryDirectory.path)/yona-cmd-\(UUID().uuidString).sqlite"]
        let (ok, okOutput) = try Self.run(["push-test", "--instance-id", "ok-cli"], environment: environment)
        #expect(ok == 0, "\(okOutput)")
        #expect(okOutput.contains("provider: fcm"))
        #expect(okOutput.contains("answer: delivered"))
        #expect(emulator.messages(to: "ok-cli").count == 1)
        let (dead, deadOutput) = try Self.run(["push-test", "--instance-id", "unregistered-cli"], environment: environment)
        #expect(dead != 0)
        #expect(deadOutput.contains("dead or malformed"))
        await emulator.stop()
    }

    @Test func simulateConflictPostsAsTheClassifierWould() async throws {
        try await withServer(.sqlite) { server in
            // setup: a user with a danger zone, made through the API of an in-process server on the same file
            let user = try await server.createUser()
            try await server.addNoGoGoal(user, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(user)
            let environment = ["YONA_DATABASE_URL": "sqlite://\(server.databaseLocation)", "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey,
                               "YONA_LOG_LEVEL": "warning", "YONA_PUSH_WORKERS": "false"]
            // act
            let (status, output) = try Self.run(["simulate", "conflict", "--vpn-login-id", "\(ua)$\(index)", "--category", "gambling",
                                                 "--url", "https://poker.example/demo"], environment: environment)
            // check
            #expect(status == 0, "\(output)")
            #expect(output.contains("goal-conflict messages raised: 1"))
            let messages = try await server.messages(user)
            #expect(messages.first?["url"] as? String == "https://poker.example/demo")
            let (bad, badOutput) = try Self.run(["simulate", "conflict", "--vpn-login-id", "nonsense", "--category", "gambling"],
                                                environment: environment)
            #expect(bad != 0)
            #expect(badOutput.contains("--vpn-login-id must look like"))
        }
    }

    @Test func badConfigurationStopsWithOneLineNamingTheVariable() throws {
        let (status, output) = try Self.run(["serve"], environment: ["YONA_PORT": "eighty"])
        #expect(status != 0)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "configuration error: YONA_PORT must be a port number 1-65535, got 'eighty'")
    }
}
