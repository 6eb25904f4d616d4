import Foundation
import Testing
import Vapor

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer

/// api.md: everything the server serves is described in openapi.yaml, and nothing more.
@Suite struct OpenAPITests {
    @Test func registeredRoutesAndDocumentedOperationsAreTheSameSet() async throws {
        try await withServer(.sqlite) { server in
            let served = Set(
                server.app.routes.all.map { route in
                    "\(route.method.rawValue) /"
                        + route.path.map { component -> String in
                            if case .parameter = component { return "{}" }
                            return component.description
                        }.joined(separator: "/")
                })
            let documented = try Self.documentedOperations()
            #expect(!served.isEmpty)
            #expect(
                served == documented,
                "served but undocumented: \(served.subtracting(documented)); documented but not served: \(documented.subtracting(served))")
        }
    }

    /// `METHOD /path` for every operation under `paths:`, parameters written `{}` and without trailing slash.
    static func documentedOperations() throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        var operations = Set<String>()
        var inPaths = false
        var currentPath: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") {
                inPaths = true
                continue
            }
            if inPaths, let first = line.first, !first.isWhitespace, first != "#" { inPaths = false }
            guard inPaths else { continue }
            if let match = line.wholeMatch(of: /^ {2}(\/[^:]*):\s*$/) {
                var path = String(match.1).replacing(/\{[^}]+\}/, with: "{}")
                if path.count > 1, path.hasSuffix("/") { path.removeLast() }
                currentPath = path
            } else if let match = line.wholeMatch(of: /^ {4}(get|put|post|delete|patch):\s*$/), let currentPath {
                operations.insert("\(match.1.uppercased()) \(currentPath)")
            }
        }
        return operations
    }
}

@Suite struct ConfigurationTests {
    @Test func defaultsAreTheEmbeddedSetUp() throws {
        let config = try AppConfig.fromEnvironment([:])
        #expect(config.database == .sqlite(path: "./data/yona.sqlite"))
        #expect(config.host == "127.0.0.1")
        #expect(config.port == 8080)
        #expect(config.testServer == false)
        #expect(config.kdfLimits.memLimit >= 64 * 1024 * 1024)
    }

    @Test func readsEveryVariable() throws {
        let config = try AppConfig.fromEnvironment([
            "YONA_DATABASE_URL": "postgres://u:p@db:5432/yona", "YONA_HOST": "0.0.0.0", "YONA_PORT": "9000",
            "YONA_PUBLIC_BASE_URL": "https://yona.example/", "YONA_TEST_SERVER": "true",
            "YONA_KDF_OPSLIMIT": "3", "YONA_KDF_MEMLIMIT": "16777216", "YONA_LOG_LEVEL": "DEBUG",
            "YONA_RECOVERY_KEY": TestServer.recoveryKey,
        ])
        #expect(config.database == .postgres(url: "postgres://u:p@db:5432/yona"))
        #expect(config.host == "0.0.0.0")
        #expect(config.port == 9000)
        #expect(config.publicBaseURL == "https://yona.example")
        #expect(config.testServer)
        #expect(config.kdfLimits == .init(opsLimit: 3, memLimit: 16_777_216))
        #expect(config.logLevel == "debug")
        #expect(config.recoveryKey == TestServer.recoveryKey)
    }

    @Test func badValuesNameTheirVariable() {
        let cases: [(String, String)] = [
            ("YONA_DATABASE_URL", "mysql://x"), ("YONA_DATABASE_URL", "sqlite://"), ("YONA_PORT", "eighty"),
            ("YONA_PORT", "70000"), ("YONA_PUBLIC_BASE_URL", "not a url"), ("YONA_TEST_SERVER", "maybe"),
            ("YONA_KDF_OPSLIMIT", "0"), ("YONA_KDF_MEMLIMIT", "12"), ("YONA_LOG_LEVEL", "loud"),
            ("YONA_RECOVERY_KEY", "short"), ("YONA_RECOVERY_KEY", TestServer.recoveryKey + "="),
        ]
        for (variable, bad) in cases {
            do {
                _ = try AppConfig.fromEnvironment([variable: bad])
                Issue.record("\(variable)=\(bad) was accepted")
            } catch {
                #expect(error.variable == variable)
                #expect(error.description.hasPrefix("configuration error: \(variable) "))
            }
        }
    }
}
