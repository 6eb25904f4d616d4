import Foundation
import Testing

@testable import YonaServer

/// privacy.md: below `info` only the server's own code may log. A log event's source is the module that logged it, so
/// every module of the server must be known to the filter, or its debug lines vanish (and a framework's would not).
@Suite struct LogSourceTests {
    @Test func everyServerModuleIsOwnAndFrameworksAreNot() throws {
        let manifest = try String(contentsOf: JSONSchema.projectRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = manifest.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: #"name: "(Yona[A-Za-z]+)""#, options: .regularExpression) else { return nil }
            return String(line[range].dropFirst("name: \"".count).dropLast())
        }
        let modules = Set(targets.filter { !$0.hasSuffix("Tests") })
        #expect(modules.contains("YonaServer") && modules.contains("YonaCrypto"), "the manifest was read: \(modules)")
        #expect(modules == QuietFrameworksLogHandler.ownModules)
        for framework in ["Vapor", "FluentKit", "SQLiteNIO", "PostgresNIO", "AsyncHTTPClient", "NIOPosix"] {
            #expect(!QuietFrameworksLogHandler.isOwn(framework))
        }
    }
}
