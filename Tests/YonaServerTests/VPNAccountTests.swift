import Fluent
import Foundation
import Testing
import YonaCrypto

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// Issue 15, VPN accounts: every device has an account in a real OpenLDAP directory (a throwaway `slapd`), made
/// and removed with the device through a durable outbox, whose password the directory checks on a bind as the
/// OpenVPN LDAP plugin does. The directory being down fails no request, and its changes arrive once it is up.
@Suite(.enabled(if: TestDirectory.runnable, "slapd is not installed (scripts/test installs it)"))
struct VPNAccountTests {
    /// A device's login and password as the owner's profile shows them.
    static func credentials(_ device: [String: Any]?) throws -> (login: String, password: String) {
        (
            try #require(value(device, "vpnProfile", "vpnLoginID") as? String),
            try #require(value(device, "vpnProfile", "vpnPassword") as? String)
        )
    }

    static func devices(_ server: TestServer, _ user: TestUser) async throws -> [[String: Any]] {
        let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
        return value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]] ?? []
    }

    static func drain(_ server: TestServer, now: Date = Date()) async throws -> Int {
        try await #require(server.app.vpnAccountOutbox).drainOnce(now: now)
    }

    @Test(arguments: TestDatabase.available)
    func accountsFollowDevicesFromCreationToDeletion(db: TestDatabase) async throws {
        let directory = try TestDirectory.make()
        defer { directory.remove() }
        try await ExternalTool.detached { try directory.start() }
        try await withServer(db, adjust: { $0.vpnAccounts = directory.settings }) { server in
            // a new user: the first device's account
            let richard = try await server.createUser(nickname: "RQ")
            #expect(try await Self.drain(server) >= 1)
            let first = try Self.credentials(try await Self.devices(server, richard).first)
            #expect(try directory.accounts() == [first.login])
            #expect(directory.binds(first.login, password: first.password))
            #expect(!directory.binds(first.login, password: first.password.uppercased() + "x"))

            // a second device, then it goes
            try await NewDeviceRequestTests.addDevice(server, richard, name: "Tablet")
            _ = try await Self.drain(server)
            let tablet = try Self.credentials(try await Self.devices(server, richard).first { $0["name"] as? String == "Tablet" })
            #expect(try directory.accounts() == [first.login, tablet.login].sorted())
            #expect(directory.binds(tablet.login, password: tablet.password))
            let tabletHref = try #require(
                value(try await Self.devices(server, richard).first { $0["name"] as? String == "Tablet" }, "_links", "self", "href") as? String)
            #expect(try await server.request(.DELETE, tabletHref, headers: richard.passwordHeader).status == 204)
            _ = try await Self.drain(server)
            #expect(try directory.accounts() == [first.login])
            #expect(!directory.binds(tablet.login, password: tablet.password))

            // the account goes with the user
            let bob = try await server.createUser(nickname: "BD")
            _ = try await Self.drain(server)
            #expect(try directory.accounts().count == 2)
            #expect(try await server.request(.DELETE, richard.path, headers: richard.passwordHeader).status == 204)
            _ = try await Self.drain(server)
            let bobsLogin = try Self.credentials(try await Self.devices(server, bob).first).login
            #expect(try directory.accounts() == [bobsLogin])
            #expect(try await PendingVPNAccountChange.query(on: server.app.db).count() == 0)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theDirectoryBeingDownFailsNoRequestAndTheAccountArrivesOnceItIsUp(db: TestDatabase) async throws {
        let directory = try TestDirectory.make()
        defer { directory.remove() }
        try await withServer(db, adjust: { $0.vpnAccounts = directory.settings }) { server in
            // down: the user is made all the same, and the change waits, sealed
            let richard = try await server.createUser(nickname: "RQ")
            let triedAt = Date()
            await #expect(throws: LDAPFailure.self) { _ = try await Self.drain(server, now: triedAt) }
            let waiting = try await PendingVPNAccountChange.query(on: server.app.db).all()
            #expect(waiting.count == 1)
            #expect(waiting.first?.attempts == 1 && waiting.first?.nextAttemptAt != nil)
            #expect(waiting.first?.lastError?.contains("ldap") == true)
            let (login, password) = try Self.credentials(try await Self.devices(server, richard).first)
            let userAnonymizedID = try #require(login.split(separator: "$").first.map(String.init))
            for row in waiting {
                #expect(row.sealed.range(of: Data(userAnonymizedID.utf8)) == nil, "the login is readable in the outbox")
                #expect(row.sealed.range(of: Data(password.utf8)) == nil)
                #expect(row.lastError?.contains(userAnonymizedID) != true)
            }
            // before the backoff is over nothing is tried
            #expect(try await Self.drain(server, now: triedAt.addingTimeInterval(1)) == 0)
            // the operator sees it waiting and failing
            let metrics = try await server.request(.GET, "/metrics").text
            #expect(metrics.contains("yona_vpn_account_outbox_depth 1") && metrics.contains("yona_vpn_account_outbox_failing 1"), "\(metrics)")

            // up: another instance on the same database (a restart, or the process that survived) applies it
            try await ExternalTool.detached { try directory.start() }
            let other = try await TestServer.start(db, sharingDatabaseOf: server, adjust: { $0.vpnAccounts = directory.settings })
            let applied = try await Self.drain(other, now: Date().addingTimeInterval(3600))
            await other.stop()
            #expect(applied == 1)
            #expect(try await server.request(.GET, "/metrics").text.contains("yona_vpn_account_outbox_depth 0"))
            #expect(try directory.accounts() == [login])
            #expect(directory.binds(login, password: password))
        }
    }

    @Test(arguments: TestDatabase.available)
    func changesAreAppliedInOrderSoADeletionNeverOvertakesItsCreation(db: TestDatabase) async throws {
        let directory = try TestDirectory.make()
        defer { directory.remove() }
        try await withServer(db, adjust: { $0.vpnAccounts = directory.settings }) { server in
            // while the directory is down a device comes and goes
            let richard = try await server.createUser(nickname: "RQ")
            try await NewDeviceRequestTests.addDevice(server, richard, name: "Tablet")
            let tabletHref = try #require(
                value(try await Self.devices(server, richard).first { $0["name"] as? String == "Tablet" }, "_links", "self", "href") as? String)
            #expect(try await server.request(.DELETE, tabletHref, headers: richard.passwordHeader).status == 204)
            #expect(try await PendingVPNAccountChange.query(on: server.app.db).count() == 3)
            try await ExternalTool.detached { try directory.start() }
            #expect(try await Self.drain(server, now: Date().addingTimeInterval(3600)) == 3)
            let first = try Self.credentials(try await Self.devices(server, richard).first).login
            #expect(try directory.accounts() == [first])
        }
    }

    @Test(arguments: TestDatabase.available)
    func aLostPhonesOverwriteRemovesItsAccounts(db: TestDatabase) async throws {
        let directory = try TestDirectory.make()
        defer { directory.remove() }
        try await ExternalTool.detached { try directory.start() }
        try await withServer(db, adjust: { $0.vpnAccounts = directory.settings }) { server in
            let richard = try await server.createUser(nickname: "RQ")
            _ = try await Self.drain(server)
            let old = try Self.credentials(try await Self.devices(server, richard).first).login
            #expect(try await OverwriteTests.requestCode(server, richard.mobileNumber).status == 204)
            let created = try await OverwriteTests.overwrite(server, richard.mobileNumber)
            #expect(created.status == 201, "\(created.text)")
            _ = try await Self.drain(server)
            let fresh = try Self.credentials(value(created.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0) as? [String: Any])
            #expect(try directory.accounts() == [fresh.login])
            #expect(!(try directory.accounts()).contains(old))
            #expect(directory.binds(fresh.login, password: fresh.password))
        }
    }

    @Test func settingsNameTheMissingVariable() throws {
        func problem(_ env: [String: String]) -> String? {
            do {
                _ = try AppConfig.fromEnvironment(env)
                return nil
            } catch {
                return error.variable
            }
        }
        #expect(problem(["YONA_VPN_ACCOUNTS": "ldap"]) == "YONA_LDAP_URL")
        #expect(problem(["YONA_VPN_ACCOUNTS": "ldap", "YONA_LDAP_URL": "http://x"]) == "YONA_LDAP_URL")
        #expect(problem(["YONA_VPN_ACCOUNTS": "ldap", "YONA_LDAP_URL": "ldap://x"]) == "YONA_LDAP_BASE_DN")
        #expect(problem(["YONA_VPN_ACCOUNTS": "directory"]) == "YONA_VPN_ACCOUNTS")
        let full = try AppConfig.fromEnvironment([
            "YONA_VPN_ACCOUNTS": "ldap", "YONA_LDAP_URL": "ldap://127.0.0.1:389/", "YONA_LDAP_BASE_DN": "dc=yona,dc=nu",
            "YONA_LDAP_BIND_DN": "cn=Manager,dc=yona,dc=nu", "YONA_LDAP_BIND_PASSWORD": "secret",
        ])
        #expect(full.vpnAccounts?.accountDN("abc$0") == "cn=abc$0,ou=SSL,dc=yona,dc=nu")
        #expect(try AppConfig.fromEnvironment([:]).vpnAccounts == nil)
    }

    @Test func sshaIsWhatTheDirectoryChecks() {
        let hash = LDAPPasswordHash.ssha("s3cret-Password", salt: [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(hash.hasPrefix("{SSHA}"))
        #expect(LDAPPasswordHash.matches(hash, password: "s3cret-Password"))
        #expect(!LDAPPasswordHash.matches(hash, password: "s3cret-passworD"))
        // fresh salt every time
        #expect(LDAPPasswordHash.ssha("same") != LDAPPasswordHash.ssha("same"))
    }
}
