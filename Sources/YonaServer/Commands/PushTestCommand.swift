import ArgumentParser
import Foundation
import Vapor
import YonaAPI
import YonaDomain
import YonaPush

/// `yona-server push-test --instance-id T | --apns-token T | --webpush-subscription FILE`: one content-free push
/// through the provider of that kind of address, and what the provider answered (the operator's "does my set-up
/// work" check).
struct PushTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-test", abstract: "Sends one content-free test push and prints the provider's answer")

    @ArgumentParser.Option(name: .customLong("instance-id"), help: "A Firebase Instance ID (registration token) to push to")
    var instanceID: String?

    @ArgumentParser.Option(name: .customLong("apns-token"), help: "An APNs device token (hex) to push to directly")
    var apnsToken: String?

    @ArgumentParser.Option(
        name: .customLong("webpush-subscription"), help: "A file holding a Web Push subscription's JSON ({\"endpoint\",\"keys\"})")
    var webPushSubscription: String?

    func run() async throws {
        guard [instanceID, apnsToken, webPushSubscription].compactMap({ $0 }).count == 1 else {
            throw CommandFailure.usage("push-test needs one of --instance-id, --apns-token, --webpush-subscription")
        }
        try await YonaRuntime.withApplication(.command) { app in
            let address = try await Self.address(instanceID: instanceID, apnsToken: apnsToken, subscriptionFile: webPushSubscription, app: app)
            let providers = app.yona.pushProvider
            let push = OutgoingPush(address: address, messageID: MessageWriter.newMessageID(), publicBaseURL: app.yona.config.pushBaseURL)
            let outcome = await providers.send(push)
            let provider: any PushProvider =
                switch address {
                case .firebase: providers.firebase
                case .apns: providers.apns
                case .webPush: providers.webPush
                }
            print("provider: \(provider.name)")
            print("data: messageId=\(push.data["messageId"] ?? "") url=\(push.data["url"] ?? "")")
            print("answer: \(Self.describe(outcome))")
            if outcome != .delivered { throw CommandFailure.failed("the push was not delivered") }
        }
    }

    private static func address(instanceID: String?, apnsToken: String?, subscriptionFile: String?, app: Application) async throws -> PushAddress {
        if let instanceID, !instanceID.isEmpty { return .firebase(instanceID) }
        if let apnsToken {
            do { return try PushAddress.apns(validating: apnsToken, property: "--apns-token") } catch {
                throw CommandFailure.usage("--apns-token must be the device token in hex")
            }
        }
        guard let subscriptionFile, let data = FileManager.default.contents(atPath: subscriptionFile),
            let subscription = try? JSONDecoder().decode(WebPushSubscription.self, from: data)
        else { throw CommandFailure.usage("--webpush-subscription must name a file holding {\"endpoint\",\"keys\":{\"p256dh\",\"auth\"}}") }
        do {
            return try await PushAddress.webPush(
                validating: subscription, allowPrivate: app.yona.config.webPushAllowPrivateEndpoints, property: "--webpush-subscription")
        } catch {
            throw CommandFailure.usage("the subscription needs an https endpoint on a public address and valid keys")
        }
    }

    static func describe(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .retry(let after, let quota, let code):
            "transient failure \(code)\(quota ? " (quota)" : "")\(after.map { ", retry after \(Int($0)) s" } ?? "")"
        case .tokenInvalid(let reason): "the address is dead or malformed (\(reason))"
        case .rejected(let code): "rejected (\(code)): check the payload or the provider set-up (key, topic, project)"
        }
    }
}

/// `yona-server vapid generate`: a VAPID key pair for operators who keep keys outside the data directory.
struct VAPIDCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vapid", abstract: "Web Push (VAPID) keys", subcommands: [Generate.self])

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prints a new VAPID private key (PEM, for YONA_VAPID_PRIVATE_KEY_FILE) and its public key")

        func run() async throws {
            let pem = VAPID.generatePEM()
            let vapid = try await VAPID(pem: pem, subject: "mailto:unused@example.invalid")
            print(pem)
            print("public key (applicationServerKey): \(vapid.publicKey)")
        }
    }
}
