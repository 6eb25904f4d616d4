import Foundation
import Vapor

/// `yona-server push-test --instance-id T`: one content-free push through the configured provider, and
/// what the provider answered (the operator's "does my Firebase set-up work" check).
struct PushTestCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "instance-id", help: "The Firebase Instance ID (registration token) to push to")
        var instanceID: String?
    }

    var help: String { "Sends one content-free test push and prints the provider's answer" }

    func run(using context: CommandContext, signature: Signature) async throws {
        guard let token = signature.instanceID, !token.isEmpty else {
            throw CommandFailure.usage("push-test needs --instance-id")
        }
        let app = context.application
        let message = PushMessage.make(token: token, messageID: MessageWriter.newMessageID(), publicBaseURL: app.yona.config.pushBaseURL)
        let outcome = await app.yona.pushProvider.send(message)
        context.console.print("provider: \(app.yona.pushProvider.name)")
        context.console.print("data: messageId=\(message.data["messageId"] ?? "") url=\(message.data["url"] ?? "")")
        context.console.print("answer: \(Self.describe(outcome))")
        if outcome != .delivered { throw CommandFailure.failed("the push was not delivered") }
    }

    static func describe(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .retry(let after, let quota, let code): "transient failure \(code)\(quota ? " (quota)" : "")\(after.map { ", retry after \(Int($0)) s" } ?? "")"
        case .tokenInvalid(let reason): "the token is dead or malformed (\(reason))"
        case .rejected(let code): "rejected (\(code)): check the payload or the Firebase project set-up"
        }
    }
}
