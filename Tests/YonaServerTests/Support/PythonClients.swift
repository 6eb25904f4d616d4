import Foundation

/// The providers' official Python clients (plivo, twilio) and aiosmtpd, in the virtual environment `scripts/test`
/// makes (`YONA_TEST_PYTHON` names its interpreter). With `YONA_TEST_REQUIRE_PYTHON_CLIENTS=1` (scripts/test) a
/// missing interpreter fails the run instead of skipping the tests that need it.
enum PythonClients {
    static var python: String? { ProcessInfo.processInfo.environment["YONA_TEST_PYTHON"] }
    static var required: Bool { ProcessInfo.processInfo.environment["YONA_TEST_REQUIRE_PYTHON_CLIENTS"] == "1" }
    static var runnable: Bool { python != nil || required }

    static func interpreter() throws -> String {
        guard let python else { throw TestSetupError(description: "YONA_TEST_REQUIRE_PYTHON_CLIENTS=1 but YONA_TEST_PYTHON is not set") }
        return python
    }

    /// Runs a script from the test fixtures to its end (on a thread of its own) and returns what it printed as JSON.
    static func run(_ script: String, _ arguments: [String]) async throws -> [String: Any] {
        let python = try interpreter()
        let path = FCMEmulator.fixture(script).path
        let output = try await ExternalTool.detached { try ExternalTool.run(python, [path] + arguments) }
        guard let json = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw TestSetupError(description: "\(script) printed no JSON object: \(String(decoding: output, as: UTF8.self))")
        }
        return json
    }
}
