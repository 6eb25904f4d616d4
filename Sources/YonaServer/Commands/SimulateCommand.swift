import Foundation
import Vapor

/// `yona-server simulate conflict --vpn-login-id ID --category gambling --url URL`: posts a network activity
/// exactly as the classifier would (for demos and manual testing).
struct SimulateCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "what", help: "What to simulate: conflict")
        var what: String
        @Option(name: "vpn-login-id", help: "The device's vpnLoginID (<userAnonymizedId>$<deviceIndex>)")
        var vpnLoginID: String?
        @Option(name: "category", help: "A classifier category name, e.g. gambling")
        var category: String?
        @Option(name: "url", help: "The visited URL")
        var url: String?
    }

    var help: String { "Posts a network activity as the network classifier would" }

    func run(using context: CommandContext, signature: Signature) async throws {
        guard signature.what == "conflict" else { throw CommandFailure.usage("simulate knows only 'conflict'") }
        let parts = (signature.vpnLoginID ?? "").split(separator: "$")
        guard parts.count == 2, let userAnonymizedID = UUID(uuidString: String(parts[0])), let deviceIndex = Int(parts[1]) else {
            throw CommandFailure.usage("--vpn-login-id must look like <userAnonymizedId>$<deviceIndex>")
        }
        guard let category = signature.category, !category.isEmpty else { throw CommandFailure.usage("--category is required") }
        let app = context.application
        let analysis = AnalysisService(db: app.db, metrics: app.yona.metrics)
        do {
            let raised = try await analysis.record(ActivityEvent(
                userAnonymizedID: userAnonymizedID, deviceIndex: deviceIndex, categoryNames: [category], matchApplications: false,
                url: signature.url, startTime: Date(), endTime: nil, idempotencyKey: nil))
            context.console.print("recorded; goal-conflict messages raised: \(raised.count)")
        } catch let error as YonaError {
            throw CommandFailure.failed("refused: \(error.code.rawValue)")
        }
    }
}
