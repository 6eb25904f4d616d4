import Foundation

@testable import YonaDelivery

/// A real SMTP server for the mail tests: aiosmtpd (PyPI) run by `Fixtures/smtp_server.py` with the test CA's
/// certificate, AUTH with one account, and failure injection by recipient (`busy…` 451, `nobody…` 550). What it
/// accepted is read back parsed by Python's email package; `events` lists every command that reached it.
final class SMTPTestServer: @unchecked Sendable {
    enum Mode: String, Sendable {
        case starttls, implicit, plaintext
    }

    static let user = "yona-relay"
    static let password = "relay-password-0123456789"

    let port: Int
    let mode: Mode
    let ca: FCMEmulator.TestCA
    let directory: URL
    private var process: ChildProcess?

    var url: String { "\(mode == .implicit ? "smtps" : "smtp")://127.0.0.1:\(port)" }

    func settings(password: String = SMTPTestServer.password) -> SMTPEmailTransport.Settings {
        .init(
            url: url, username: Self.user, password: password, fromAddress: "noreply@yona.example",
            trustRootsPEM: try? String(contentsOfFile: ca.root, encoding: .utf8), timeoutSeconds: 10)
    }

    private init(port: Int, mode: Mode, ca: FCMEmulator.TestCA, directory: URL) {
        self.port = port
        self.mode = mode
        self.ca = ca
        self.directory = directory
    }

    /// Starts the server on a free port (or `port`, to bring one back after an outage).
    static func start(_ mode: Mode, port: Int? = nil, ca: FCMEmulator.TestCA? = nil) async throws -> SMTPTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yona-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = SMTPTestServer(
            port: try port ?? TestServerProbe.freePort(), mode: mode, ca: try ca ?? FCMEmulator.TestCA.make(), directory: directory)
        try await server.run()
        return server
    }

    private func run() async throws {
        let ready = directory.appendingPathComponent("ready")
        try? FileManager.default.removeItem(at: ready)
        process = try ChildProcess(
            try PythonClients.interpreter(),
            [
                FCMEmulator.fixture("smtp_server.py").path, String(port), directory.path, mode.rawValue, ca.certificate, ca.key, Self.user,
                Self.password,
            ],
            output: directory.appendingPathComponent("server.log").path)
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: ready.path) { try await Task.sleep(for: .milliseconds(50)) }
        guard FileManager.default.fileExists(atPath: ready.path) else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
            throw TestSetupError(description: "the SMTP server did not start: \(log)")
        }
    }

    /// A socket bound to the port (not listening) while the server is down: connections are refused, as from a relay
    /// that is down, and no other test's free-port pick can take the port before `restart` (a CI run once found it
    /// taken: "address already in use").
    private var placeholder: Int32?

    /// Stops the server (an outage); `restart` brings it back on the same port.
    func stop() async throws {
        guard let process else { return }
        process.signal(SIGTERM)
        _ = try await ExternalTool.detached { process.wait() }
        self.process = nil
        placeholder = Self.bind(port)
    }

    func restart() async throws {
        if let placeholder { close(placeholder) }
        placeholder = nil
        try await run()
    }

    /// A TCP socket bound to 127.0.0.1:`port` (SO_REUSEADDR, so the stopped server's closing connections do not stand
    /// in the way), or nil if the port cannot be had.
    private static func bind(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The messages it accepted, as Python's email package parsed them.
    func messages() throws -> [[String: Any]] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil).filter { $0.pathExtension == "json" }
            .compactMap { try JSONSerialization.jsonObject(with: Data(contentsOf: $0)) as? [String: Any] }
    }

    /// Every command that reached it, as `COMMAND tls=True|False`.
    func events() -> [String] {
        ((try? String(contentsOf: directory.appendingPathComponent("events"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func remove() async {
        try? await stop()
        if let placeholder { close(placeholder) }
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(at: ca.directory)
    }
}
