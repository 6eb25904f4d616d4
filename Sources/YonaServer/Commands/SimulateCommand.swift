import ArgumentParser
import Foundation
import Vapor
import YonaAPI
import YonaDomain

/// `yona-server simulate conflict --vpn-login-id ID --category gambling --url URL`: posts a network activity
/// exactly as the classifier would (for demos and manual testing).
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate", abstract: "Posts a network activity as the network classifier would")

    @ArgumentParser.Argument(help: "What to simulate: conflict")
    var what: String
    @ArgumentParser.Option(name: .customLong("vpn-login-id"), help: "The device's vpnLoginID (<userAnonymizedId>$<deviceIndex>)")
    var vpnLoginID: String?
    @ArgumentParser.Option(name: .customLong("category"), help: "A classifier category name, e.g. gambling")
    var category: String?
    @ArgumentParser.Option(name: .customLong("url"), help: "The visited URL")
    var url: String?

    func run() async throws {
        guard what == "conflict" else { throw CommandFailure.usage("simulate knows only 'conflict'") }
        let parts = (vpnLoginID ?? "").split(separator: "$")
        guard parts.count == 2, let userAnonymizedID = UUID(uuidString: String(parts[0])), let deviceIndex = Int(parts[1]) else {
            throw CommandFailure.usage("--vpn-login-id must look like <userAnonymizedId>$<deviceIndex>")
        }
        guard let category, !category.isEmpty else { throw CommandFailure.usage("--category is required") }
        try await YonaRuntime.withApplication(.command) { app in
            let analysis = AnalysisService(db: app.db, metrics: app.yona.metrics)
            do {
                let raised = try await analysis.record(
                    ActivityEvent(
                        userAnonymizedID: userAnonymizedID, deviceIndex: deviceIndex, categoryNames: [category], matchApplications: false,
                        url: url, startTime: Date(), endTime: nil, idempotencyKey: nil))
                print("recorded; goal-conflict messages raised: \(raised.count)")
            } catch let error as YonaError {
                throw CommandFailure.failed("refused: \(error.code.rawValue)")
            }
        }
    }
}
