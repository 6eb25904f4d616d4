import ArgumentParser
import Foundation
import Vapor
import YonaAPI
import YonaDelivery
import YonaDomain

/// `yona-server sms-test --to NUMBER`: one text through the configured SMS provider, straight (not through the
/// outbox), and what the provider answered (the operator's "does my Plivo or Twilio set-up work" check).
struct SMSTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sms-test", abstract: "Sends one test text and prints the provider's answer")

    @ArgumentParser.Option(name: .customLong("to"), help: "The mobile number to text, in E.164 (+31612345678)")
    var to: String?

    func run() async throws {
        guard let to, let number = try? MobileNumber(to) else { throw CommandFailure.usage("sms-test needs --to with a number like +31612345678") }
        try await YonaRuntime.withApplication(.command) { app in
            let transport = app.yona.texts.sms
            let outcome = await transport.deliver("Yona test text: your SMS set-up works.", to: number.value, kind: "test text")
            print("provider: \(transport.name)")
            print("answer: \(describe(outcome))")
            if outcome != .delivered { throw CommandFailure.failed("the text was not delivered") }
        }
    }
}

/// `yona-server email-test --to ADDRESS`: one mail through the configured mail provider, and what it answered.
struct EmailTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "email-test", abstract: "Sends one test mail and prints the provider's answer")

    @ArgumentParser.Option(name: .customLong("to"), help: "The address to mail")
    var to: String?

    func run() async throws {
        guard let to, !to.isEmpty else { throw CommandFailure.usage("email-test needs --to with an address") }
        try await YonaRuntime.withApplication(.command) { app in
            let transport = app.yona.texts.email
            let email = Email(
                from: "Yona <\(app.yona.config.emailFrom)>", to: "<\(to)>", subject: "Yona test mail",
                body: "<p>Your Yona mail set-up works.</p>", text: "Your Yona mail set-up works.\n")
            let outcome = await transport.deliver(email)
            print("provider: \(transport.name)")
            print("answer: \(describe(outcome))")
            if outcome != .delivered { throw CommandFailure.failed("the mail was not delivered") }
        }
    }
}

/// A delivery outcome as the operator reads it.
func describe(_ outcome: DeliveryOutcome) -> String {
    switch outcome {
    case .delivered: "delivered"
    case .retry(let code, let after): "transient failure \(code)\(after.map { ", retry after \(Int($0)) s" } ?? ""); try again later"
    case .rejected(let code): "refused (\(code))"
    case .deadAddress(let code): "the provider will never deliver to this address (\(code))"
    case .misconfigured(let code): "the provider refuses our settings (\(code)): check the credentials and the sender"
    }
}
