import Foundation
import Testing

/// docs/architecture.md "Modules and arrows": each module imports only what lies below it. Package.swift declares the
/// arrows, but SwiftPM lets a file import any module already built in the graph; this holds the files to them.
@Suite struct ModuleLayeringTests {
    /// From the bottom up; a module may import the ones before it, never the ones after.
    static let layers = ["YonaCrypto", "YonaStore", "YonaDelivery", "YonaDomain", "YonaPush", "YonaConfig", "YonaAPI", "YonaServer"]
    /// Frameworks only the top two layers may use: the store, the domain, push and the settings know nothing of HTTP.
    static let httpFrameworks = ["Vapor", "ArgumentParser"]
    /// How things leave the server (HTTP clients, libcurl, libldap) is the delivery module's: the domain queues work
    /// and never talks to a provider itself.
    static let transports = ["AsyncHTTPClient", "CCurl", "CLDAP"]

    @Test func noModuleImportsALayerAboveItOrHTTPBelowTheAPI() throws {
        let sources = JSONSchema.projectRoot.appendingPathComponent("Sources")
        var checked = 0
        for (index, module) in Self.layers.enumerated() {
            let above = Set(Self.layers[(index + 1)...])
            var forbidden = index < Self.layers.firstIndex(of: "YonaAPI")! ? above.union(Self.httpFrameworks) : above
            if module == "YonaDomain" || module == "YonaStore" || module == "YonaCrypto" { forbidden.formUnion(Self.transports) }
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
}
