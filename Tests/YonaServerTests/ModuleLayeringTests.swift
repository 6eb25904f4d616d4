import Foundation
import Testing

/// docs/architecture.md "Modules and arrows": each module imports only what lies below it. Package.swift declares the
/// arrows, but SwiftPM lets a file import any module already built in the graph; this holds the files to them.
@Suite struct ModuleLayeringTests {
    /// From the bottom up; a module may import the ones before it, never the ones after.
    static let layers = [
        "YonaCrypto", "YonaStore", "YonaObservability", "YonaDelivery", "YonaDomain", "YonaPush", "YonaConfig", "YonaAPI", "YonaServer",
    ]
    /// Frameworks only the top two layers may use: the store, the domain, push and the settings know nothing of HTTP.
    /// Fluent is FluentKit's integration into Vapor (it imports Vapor): below the API the models and queries come from
    /// FluentKit, so those modules compile while Vapor does (docs/performance.md "From a fresh clone").
    static let httpFrameworks = ["Vapor", "Fluent", "ArgumentParser"]
    /// How things leave the server (HTTP clients, libcurl, libldap) is the delivery module's: the domain queues work
    /// and never talks to a provider itself.
    static let transports = ["AsyncHTTPClient", "CCurl", "CLDAP"]
    /// Prometheus is the observability module's (and the executable's, which hands its registry to swift-metrics).
    static let metricsFrameworks = ["Prometheus"]
    /// Each outbox table has one owner: its model lives in the store and only the delivery module queues, claims,
    /// finishes and counts its rows (`PushOutbox`, `TextQueue`, `VPNChangeQueue`); the store's migrations name them too.
    static let outboxes = [
        "PendingPush", "PendingText", "PendingVPNAccountChange", "push_outbox", "text_outbox", "vpn_account_outbox",
    ]

    @Test func noModuleImportsALayerAboveItOrHTTPBelowTheAPI() throws {
        let sources = JSONSchema.projectRoot.appendingPathComponent("Sources")
        var checked = 0
        for (index, module) in Self.layers.enumerated() {
            let above = Set(Self.layers[(index + 1)...])
            var forbidden = index < Self.layers.firstIndex(of: "YonaAPI")! ? above.union(Self.httpFrameworks) : above
            if module == "YonaDomain" || module == "YonaStore" || module == "YonaCrypto" || module == "YonaObservability" {
                forbidden.formUnion(Self.transports)
            }
            if module != "YonaObservability" && module != "YonaServer" { forbidden.formUnion(Self.metricsFrameworks) }
            let directory = sources.appendingPathComponent(module)
            let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.allObjects as? [URL])
            for file in files where file.pathExtension == "swift" {
                let imports = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line -> String? in
                    let words = line.split(separator: " ")
                    guard let at = words.firstIndex(of: "import"), at + 1 < words.count else { return nil }
                    return words[..<at].allSatisfy { $0.hasPrefix("@") } ? String(words[at + 1]) : nil
                }
                checked += 1
                let wrong = imports.filter(forbidden.contains)
                #expect(wrong.isEmpty, "\(module)/\(file.lastPathComponent) imports \(wrong)")
            }
        }
        #expect(checked > 100, "the sources were found: \(checked) files")
    }

    @Test func onlyTheDeliveryModuleTouchesAnOutboxTable() throws {
        let sources = JSONSchema.projectRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.allObjects as? [URL])
        var owners = 0
        for file in files where file.pathExtension == "swift" {
            let module = file.pathComponents[file.pathComponents.lastIndex(of: "Sources")! + 1]
            let text = try String(contentsOf: file, encoding: .utf8)
            // Outside the code, a name in a comment or a sealing label (`"text_outbox.sealed"`) is no use of the table.
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n").replacingOccurrences(of: "_outbox.sealed", with: "")
            let named = Self.outboxes.filter { name in
                code.ranges(of: name).contains { range in
                    // whole words only (`PendingPushes` or `push_outbox_depth` are other names)
                    let after = range.upperBound < code.endIndex ? code[range.upperBound] : " "
                    return !(after.isLetter || after.isNumber || after == "_")
                }
            }
            if module == "YonaDelivery" && !named.isEmpty { owners += 1 }
            #expect(
                named.isEmpty || module == "YonaDelivery" || module == "YonaStore", "\(module)/\(file.lastPathComponent) names \(named)")
        }
        #expect(owners >= 2, "the owners were found: \(owners) files")
    }

    /// Issue 36: a request's reads have a deadline only through `Request.store`; Fluent's `req.db` would wait forever
    /// on a connection that died without saying so.
    @Test func requestsReachTheDatabaseThroughTheirDeadline() throws {
        let api = JSONSchema.projectRoot.appendingPathComponent("Sources/YonaAPI")
        let files = try #require(FileManager.default.enumerator(at: api, includingPropertiesForKeys: nil)?.allObjects as? [URL])
        var stores = 0
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            stores += text.ranges(of: "req.store").count
            let plain = text.split(separator: "\n").filter { line in
                !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                    && line.range(of: #"\b(req|request|application)\.db\b"#, options: .regularExpression) != nil
            }
            #expect(plain.isEmpty, "\(file.lastPathComponent) reaches the database without the read deadline: \(plain)")
        }
        #expect(stores > 30, "the handlers were read: \(stores)")
    }
}
