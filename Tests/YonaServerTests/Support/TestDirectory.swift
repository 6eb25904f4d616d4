import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaServer

/// A throwaway OpenLDAP `slapd` (Debian's `slapd`) for the VPN account tests: its own configuration, database and
/// port under a temporary directory, the schemas the accounts need (core, cosine, nis), and the access rule the
/// OpenVPN LDAP plugin relies on (anyone may bind as an account with its password). `make` only writes it, so a
/// test can point a server at a directory that is down and `start` it later.
final class TestDirectory: @unchecked Sendable {
    static let slapd = "/usr/sbin/slapd"
    /// scripts/test installs slapd and sets this, so CI never skips these tests.
    static var required: Bool { ProcessInfo.processInfo.environment["YONA_TEST_REQUIRE_LDAP"] == "1" }
    static var available: Bool { FileManager.default.isExecutableFile(atPath: slapd) }
    static var runnable: Bool { available || required }

    let folder: URL
    let port: Int
    let baseDN = "dc=yona,dc=test"
    let adminDN = "cn=admin,dc=yona,dc=test"
    let adminPassword = "directory-admin-secret"
    private var seeded = false

    var url: String { "ldap://127.0.0.1:\(port)/" }
    var settings: LDAPSettings { LDAPSettings(url: url, baseDN: baseDN, bindDN: adminDN, bindPassword: adminPassword) }
    private var pidFile: URL { folder.appendingPathComponent("slapd.pid") }

    private init(folder: URL, port: Int) {
        self.folder = folder
        self.port = port
    }

    static func make() throws -> TestDirectory {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("yona-slapd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("db"), withIntermediateDirectories: true)
        let directory = TestDirectory(folder: folder, port: freePort())
        let config = """
            include /etc/ldap/schema/core.schema
            include /etc/ldap/schema/cosine.schema
            include /etc/ldap/schema/nis.schema
            pidfile \(directory.pidFile.path)
            modulepath /usr/lib/ldap
            moduleload back_mdb
            database mdb
            maxsize 10485760
            suffix "\(directory.baseDN)"
            rootdn "\(directory.adminDN)"
            rootpw \(directory.adminPassword)
            directory \(folder.appendingPathComponent("db").path)
            access to attrs=userPassword by self write by anonymous auth by * none
            access to * by * read

            """
        try Data(config.utf8).write(to: folder.appendingPathComponent("slapd.conf"))
        return directory
    }

    /// Whether something accepts TCP connections on the loopback port.
    static func accepts(_ port: Int) -> Bool { onLoopback(port, connect) == 0 }

    /// Runs `connect` or `bind` with a fresh TCP socket and `127.0.0.1:port`, closes the socket, returns the result.
    private static func onLoopback(_ port: Int, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// A port below the kernel's ephemeral range (32768 and up here), so no outgoing connection or `port: 0`
    /// listener of the tests can hold it, and free when asked (another test's slapd is not listening on it).
    static func freePort() -> Int {
        for _ in 0..<50 {
            let port = Int.random(in: 10_000..<32_000)
            if onLoopback(port, bind) == 0 { return port }
        }
        return Int.random(in: 10_000..<32_000)
    }

    /// Starts slapd and waits until it answers; the first start also adds the base and `ou=SSL`.
    func start() throws {
        try ExternalTool.daemon(Self.slapd, ["-h", url, "-f", folder.appendingPathComponent("slapd.conf").path])
        // Listening is checked with a plain connect, not a tool per try: every spawn takes the tests' spawn lock.
        var listening = false
        for _ in 0..<200 {
            if Self.accepts(port) {
                listening = true
                break
            }
            Thread.sleep(forTimeInterval: 0.025)
        }
        guard listening else { throw TestSetupError(description: "slapd did not listen on \(url)") }
        guard !seeded else { return }
        let base = """
            dn: \(baseDN)
            objectClass: dcObject
            objectClass: organization
            o: Yona test
            dc: yona

            dn: ou=SSL,\(baseDN)
            objectClass: organizationalUnit
            ou: SSL

            """
        let ldif = folder.appendingPathComponent("base.ldif")
        try Data(base.utf8).write(to: ldif)
        _ = try ExternalTool.run("ldapadd", ["-x", "-H", url, "-D", adminDN, "-w", adminPassword, "-f", ldif.path])
        seeded = true
    }

    /// Stops slapd (its data stays for a later `start`).
    func stop() {
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return }
        kill(pid, SIGTERM)
        for _ in 0..<40 where kill(pid, 0) == 0 { Thread.sleep(forTimeInterval: 0.025) }
        if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }

    func remove() {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The logins of the accounts under `ou=SSL`, sorted.
    func accounts() throws -> [String] {
        let out = try ExternalTool.run(
            "ldapsearch", ["-x", "-LLL", "-H", url, "-D", adminDN, "-w", adminPassword, "-b", "ou=SSL,\(baseDN)", "(objectClass=account)", "uid"])
        return String(decoding: out, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("uid: ") }.map { String($0.dropFirst(5)) }.sorted()
    }

    /// Whether the account binds with this password, as the OpenVPN LDAP plugin checks it.
    func binds(_ login: String, password: String) -> Bool {
        (try? ExternalTool.run("ldapwhoami", ["-x", "-H", url, "-D", settings.accountDN(login), "-w", password])) != nil
    }
}
