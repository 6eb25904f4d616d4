import Foundation

/// How the server reaches Apple's push service with token authentication (operations.md "Pushes without Google").
package struct APNsSettings: Sendable, Equatable {
    /// The `.p8` signing key Apple issues (a PKCS#8 PEM P-256 key).
    package var keyPEM: String
    /// The key's 10-character id and the team's 10-character id, from Apple's developer account.
    package var keyID: String
    package var teamID: String
    /// The app's bundle id: the `apns-topic` of every push.
    package var topic: String
    /// Apple's host for the environment, or a local emulator.
    package var url: String
    /// Roots beside the system's for `url`'s TLS (a local emulator's test CA).
    package var trustRootsPEM: String? = nil

    package static let production = "https://api.push.apple.com"
    package static let sandbox = "https://api.sandbox.push.apple.com"

    package init(keyPEM: String, keyID: String, teamID: String, topic: String, url: String, trustRootsPEM: String? = nil) {
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.url = url
        self.trustRootsPEM = trustRootsPEM
    }
}
