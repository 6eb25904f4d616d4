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
                           "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_LOG_LEVEL": "warning",
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

    @Test func badConfigurationStopsWithOneLineNamingTheVariable() throws {
        let (status, output) = try Self.run(["serve"], environment: ["YONA_PORT": "eighty"])
        #expect(status != 0)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "configuration error: YONA_PORT must be a port number 1-65535, got 'eighty'")
    }
}
