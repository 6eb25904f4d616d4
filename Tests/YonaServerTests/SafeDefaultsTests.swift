import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer
@testable import YonaStore

/// operations.md "Safe defaults": what a server does before an operator has configured anything.
@Suite struct SafeDefaultsTests {
    static let samples = JSONSchema.projectRoot.appendingPathComponent("Sources/YonaConfig/Samples")

    /// A binary started away from the checkout (an image, a package) still serves the VPN files it links: the samples
    /// are in the binary.
    @Test func aServerStartedInAnEmptyDirectoryServesTheVPNFilesItLinks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yona-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = try CrashTests.CrashedServer("yona-empty-dir")
        defer { process.removeDatabase() }
        let server = try ChildProcess.server(["serve"], environment: process.environment([:]), directory: directory.path)
        defer { server.kill9() }
        try await CrashTests.waitUntilHealthy(process.base)
        let client = TestServerProbe(baseURL: process.base)

        let user = try await client.createUser(extra: [
            "deviceName": "My iPhone", "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
        ])
        let profile = try await client.request(.GET, user.profilePath, headers: user.passwordHeader)
        let device = try #require(value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0) as? [String: Any])
        #expect(device["sslRootCertCN"] as? String == "yona-sample-root.invalid")
        let ovpn = try await client.request(.GET, try #require(value(device, "vpnProfile", "_links", "yona:ovpnProfile", "href") as? String))
        let ovpnSample = try Data(contentsOf: Self.samples.appendingPathComponent("profile.ovpn"))
        #expect(ovpn.status == 200 && ovpn.body == ovpnSample)
        let root = try await client.request(.GET, try #require(value(device, "_links", "yona:sslRootCert", "href") as? String))
        let rootSample = try Data(contentsOf: Self.samples.appendingPathComponent("rootcert.cer"))
        #expect(root.status == 200 && root.body == rootSample)
        let mobileConfig = try await client.request(
            .GET, try #require(value(device, "_links", "yona:appleMobileConfig", "href") as? String), headers: user.passwordHeader)
        let loginID = try #require(value(device, "vpnProfile", "vpnLoginID") as? String)
        #expect(mobileConfig.status == 200 && mobileConfig.text.contains(loginID), "\(mobileConfig.text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing was read from or written to it")
    }

    static func categories(_ server: TestServer) async throws -> [[String: Any]] {
        let answer = try await server.request(.GET, "/admin/activityCategories/", headers: TestServer.bearer)
        try #require(answer.status == 200, "\(answer.text)")
        return try #require(value(answer.json, "_embedded", "yona:activityCategories") as? [[String: Any]])
    }

    static func names(_ categories: [[String: Any]]) -> Set<String> {
        Set(categories.compactMap { value($0, "localizableName", "en-US") as? String })
    }

    static func mandatory(_ categories: [[String: Any]]) -> [String] {
        categories.filter { $0["mandatoryNoGo"] as? Bool == true }.compactMap { value($0, "localizableName", "en-US") as? String }
    }

    static let productionNames: Set<String> = [
        "Adult content", "Communication", "Gambling", "Games", "Entertainment", "News, reading & reference", "Social",
    ]

    /// A production server's fresh database gets Yona's production set; a test server's keeps Yona's test set, also
    /// when it is later started as a production server.
    @Test(arguments: TestDatabase.available)
    func aProductionServerStartsWithYonasProductionCategories(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.testServer = false }) { production in
            let categories = try await Self.categories(production)
            #expect(Self.names(categories) == Self.productionNames)
            #expect(Self.mandatory(categories) == ["Adult content"])
            let games = try #require(categories.first { value($0, "localizableName", "en-US") as? String == "Games" })
            #expect((games["smoothwallCategories"] as? [String])?.contains("Online Games") == true)
            // the apps see them by their names in the request's language
            let listed = try await production.request(.GET, "/activityCategories/", headers: [("Accept-Language", "nl-NL")])
            let dutch = (value(listed.json, "_embedded", "yona:activityCategories") as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(Set(dutch).contains("Nieuws, lezen en naslag"), "\(dutch)")
        }
        try await withServer(db) { test in
            let testSet = try await Self.categories(test)
            #expect(Self.mandatory(testSet) == ["Gambling"], "Yona's integration tests expect the test set")
            // the same database started again as a production server keeps its categories
            let again = try await TestServer.start(db, sharingDatabaseOf: test) { $0.testServer = false }
            let kept = try await Self.categories(again)
            await again.stop()
            #expect(Self.names(kept) == Self.names(testSet) && Self.mandatory(kept) == ["Gambling"])
        }
    }

    /// The production set replaces only what the migrations just seeded: never a database with users or with
    /// categories the operator changed. `categories import` reads the same file.
    @Test(arguments: TestDatabase.available)
    func theProductionSetReplacesOnlyAFreshlySeededSet(db: TestDatabase) async throws {
        let seed = SeedProductionActivityCategories(production: true)
        try await withServer(db) { server in
            _ = try await server.createUser()
            try await seed.prepare(on: server.app.db)
            #expect(Self.mandatory(try await Self.categories(server)) == ["Gambling"], "a database with users keeps its set")
        }
        try await withServer(db) { server in
            let edited = try #require(try await ActivityCategory.query(on: server.app.db).first())
            edited.applications.append("an operator's app")
            try await edited.save(on: server.app.db)
            try await seed.prepare(on: server.app.db)
            #expect(Self.mandatory(try await Self.categories(server)) == ["Gambling"], "an edited set is kept")
        }
        try await withServer(db) { server in
            try await seed.prepare(on: server.app.db)
            #expect(Self.names(try await Self.categories(server)) == Self.productionNames, "a freshly seeded set is replaced")
        }
        let file = try Data(contentsOf: JSONSchema.projectRoot.appendingPathComponent("Sources/YonaStore/Categories/production.json"))
        let entries = try CategoriesCommand.parse(file)
        let embedded = try SeedProductionActivityCategories.productionSet().map(\.id)
        #expect(entries.count == 7 && entries.map(\.id) == embedded)
    }

    /// A production server told to listen on a public address keeps `/metrics`, the analyzer and the admin API on
    /// loopback unless YONA_INTERNAL_PORT says otherwise; a test server and a loopback listener serve one port.
    @Test func aProductionServerOnAPublicAddressKeepsItsInternalAPIsOnLoopback() throws {
        let base = ["YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey]
        func config(_ extra: [String: String]) throws -> AppConfig { try AppConfig.fromEnvironment(base.merging(extra) { $1 }) }
        let public0 = try config(["YONA_HOST": "0.0.0.0"])
        #expect(public0.internalPort == 8081 && public0.internalHost == "127.0.0.1")
        let publicV6 = try config(["YONA_HOST": "::", "YONA_PORT": "9000"])
        #expect(publicV6.internalPort == 9001 && publicV6.internalHost == "127.0.0.1")
        #expect(try config(["YONA_HOST": "0.0.0.0", "YONA_INTERNAL_PORT": "9100"]).internalPort == 9100)
        #expect(try config([:]).internalPort == nil, "the default listener is loopback: one port")
        #expect(try config(["YONA_HOST": "localhost"]).internalPort == nil)
        #expect(try config(["YONA_HOST": "0.0.0.0", "YONA_TEST_SERVER": "true"]).internalPort == nil)
    }

    /// A production server pushes a device at most every 5 s (issue 34); a test server pushes at once, as Yona's did.
    @Test func aProductionServerSpacesAPhonesPushes() throws {
        let base = ["YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey]
        func config(_ extra: [String: String]) throws -> AppConfig { try AppConfig.fromEnvironment(base.merging(extra) { $1 }) }
        #expect(try config([:]).push.minimumIntervalSeconds == 5)
        #expect(try config(["YONA_TEST_SERVER": "true"]).push.minimumIntervalSeconds == 0)
        #expect(try config(["YONA_TEST_SERVER": "true", "YONA_PUSH_MIN_INTERVAL_SECONDS": "5"]).push.minimumIntervalSeconds == 5)
        #expect(try config(["YONA_PUSH_MIN_INTERVAL_SECONDS": "0"]).push.minimumIntervalSeconds == 0)
        for wrong in ["-1", "1.5", "3601", "soon"] {
            #expect(throws: AppConfig.Invalid.self) { try config(["YONA_PUSH_MIN_INTERVAL_SECONDS": wrong]) }
        }
    }
}
