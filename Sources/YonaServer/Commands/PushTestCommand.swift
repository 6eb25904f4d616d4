import ArgumentParser
import Foundation
import Vapor
import YonaAPI
import YonaDomain
import YonaPush

/// `yona-server push-test --instance-id T`: one content-free push through the configured provider, and
/// what the provider answered (the operator's "does my Firebase set-up work" check).
struct PushTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-test", abstract: "Sends one content-free test push and prints the provider's answer")

    @ArgumentParser.Option(name: .customLong("instance-id"), help: "The Firebase Instance ID (registration token) to push to")
    var instanceID: String?

    func run() async throws {
        guard let token = instanceID, !token.isEmpty else { throw CommandFailure.usage("push-test needs --instance-id") }
        try await YonaRuntime.withApplication(.command) { app in
            let message = PushMessage.make(token: token, messageID: MessageWriter.newMessageID(), publicBaseURL: app.yona.config.pushBaseURL)
            let outcome = await app.yona.pushProvider.send(message)
            print("provider: \(app.yona.pushProvider.name)")
            print("data: messageId=\(message.data["messageId"] ?? "") url=\(message.data["url"] ?? "")")
            print("answer: \(Self.describe(outcome))")
            if outcome != .delivered { throw CommandFailure.failed("the push was not delivered") }
        }
    }

    static func describe(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .retry(let after, let quota, let code):
            "transient failure \(code)\(quota ? " (quota)" : "")\(after.map { ", retry after \(Int($0)) s" } ?? "")"
        case .tokenInvalid(let reason): "the token is dead or malformed (\(reason))"
        case .rejected(let code): "rejected (\(code)): check the payload or the Firebase project set-up"
        }
    }
}
