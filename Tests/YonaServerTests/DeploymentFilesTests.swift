import Foundation
import Testing

/// operations.md "Deploying": the Kubernetes files pass the Kubernetes schemas (offline, strict, through
/// kubernetes-validate from PyPI) and keep what the document promises: non-root, read-only root filesystem, no
/// capabilities, probes, resource requests, secrets as files, and the internal port reachable only from the pods the
/// NetworkPolicy names.
@Suite(.enabled(if: PythonClients.runnable)) struct DeploymentFilesTests {
    static let kubernetesVersion = "1.30.0"
    static let directory = JSONSchema.projectRoot.appendingPathComponent("deploy/kubernetes")

    static func check(_ files: [String]) async throws -> [[String: Any]] {
        let json = try await PythonClients.run("kubernetes_check.py", [kubernetesVersion] + files)
        return try #require(json["documents"] as? [[String: Any]])
    }

    static var manifests: [String] {
        get throws {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" }
                .sorted().map { directory.appendingPathComponent($0).path }
        }
    }

    @Test func theKubernetesFilesPassTheSchemasAndKeepTheirPromises() async throws {
        let files = try Self.manifests
        // every file is listed in the kustomization, and it lists nothing else
        let kustomization = try String(contentsOf: Self.directory.appendingPathComponent("kustomization.yaml"), encoding: .utf8)
        let listed = Set(
            kustomization.split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return trimmed.hasPrefix("- ") && trimmed.hasSuffix(".yaml") ? String(trimmed.dropFirst(2)) : nil
            })
        #expect(listed == Set(files.map { URL(fileURLWithPath: $0).lastPathComponent }))

        let documents = try await Self.check(files)
        for document in documents {
            #expect((document["errors"] as? [String]) == [], "\(document["file"] ?? "") \(document["kind"] ?? ""): \(document["errors"] ?? "")")
        }
        func named(_ kind: String, _ name: String) throws -> [String: Any] {
            try #require(documents.first { $0["kind"] as? String == kind && $0["name"] as? String == name }?["facts"] as? [String: Any])
        }
        let app = try named("Deployment", "yona-app")
        let workers = try named("Deployment", "yona-workers")
        let migrate = try named("Job", "yona-migrate")
        for workload in [app, workers, migrate] {
            #expect(workload["runAsNonRoot"] as? Bool == true)
            #expect(workload["readOnlyRootFilesystem"] as? Bool == true)
            #expect(workload["dropsAllCapabilities"] as? Bool == true)
            #expect(workload["requests"] as? Bool == true, "requests and a memory limit")
            #expect((workload["secretsInEnv"] as? [String]) == [], "secrets are mounted files, never environment values")
        }
        #expect(app["args"] as? [[String]] == [["serve", "--no-workers"]])
        #expect(workers["args"] as? [[String]] == [["workers"]])
        #expect(migrate["args"] as? [[String]] == [["migrate"]])
        for deployment in [app, workers] {
            #expect(Set(deployment["probes"] as? [String] ?? []).isSuperset(of: ["readinessProbe", "livenessProbe"]))
            #expect((deployment["replicas"] as? Int ?? 0) >= 2, "several replicas are safe")
        }
        // the public port from anywhere, the internal one only from the labelled pods
        let ingress = try #require(try named("NetworkPolicy", "yona")["ingress"] as? [[String: Any]])
        for rule in ingress {
            let ports = (rule["ports"] as? [[String: Any]] ?? []).compactMap { $0["port"] as? Int }
            if ports.contains(8081) { #expect(rule["from"] != nil, "the internal port is open to selected pods only") }
        }
        #expect(ingress.contains { ($0["ports"] as? [[String: Any]])?.contains { $0["port"] as? Int == 8081 } == true })
        #expect(try named("Service", "yona")["ports"] as? [String] == ["http"], "the public Service carries the app API only")
    }

    /// The check can fail: a misspelt field and a wrong type are refused.
    @Test func aBrokenManifestIsRefused() async throws {
        let original = try String(contentsOf: Self.directory.appendingPathComponent("app.yaml"), encoding: .utf8)
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("yona-broken-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: broken) }
        try original.replacingOccurrences(of: "readOnlyRootFilesystem: true", with: "readOnlyRootFileSystem: true")
            .replacingOccurrences(of: "replicas: 2", with: "replicas: two").write(to: broken, atomically: true, encoding: .utf8)
        let documents = try await Self.check([broken.path])
        let errors = try #require(documents.first?["errors"] as? [String])
        #expect(errors.count == 1 && !errors[0].isEmpty, "\(errors)")
    }
}
