import Foundation
import YonaCrypto
import YonaStore

/// The app an activity was measured in (app activity the phone reports; network activity has none), as an activity
/// row keeps it without saying which app it was:
/// - `tag` tells one app from another among one user's activities, so that an app's session is extended only by the
///   same app (Yona's rule): a keyed BLAKE2b of the name under a key derived from the user's anonymous-inbox secret,
///   which only the user's password unlocks. Tags of different users are unrelated, and a dump cannot test guesses.
/// - the name itself is sealed to the user's anonymous inbox when a row is written (`SealedBox`): only the user reads
///   it back, in the raw activities of a day (`…/details/{goal}/raw/`).
package struct ActivityApp: Sendable, Equatable {
    package let tag: String
    package let name: String
    package let inboxPublicKey: [UInt8]

    /// The tag of network activity, which has no app.
    package static let networkTag = Activity.networkAppTag

    package init(name: String, inboxSecretKey: Data) throws {
        let inbox = BoxKeyPair(secretKey: try SymmetricKey(bytes: Array(inboxSecretKey)))
        var tagKey = KeyedHash.hash(Array("yona/activity-app-tag/v1".utf8), key: Array(inboxSecretKey))
        defer { SecretMemory.wipe(&tagKey) }
        tag = Hex.lowercase(KeyedHash.hash(Array(name.utf8), key: tagKey, outputLength: 16))
        self.name = name
        inboxPublicKey = inbox.publicKey
    }

    /// The name as the row stores it.
    package func sealedName() throws -> Data {
        Data(try SealedBox.seal(Array(name.utf8), to: inboxPublicKey))
    }

    /// The name of a stored row; "" for network activity (and for rows stored before apps were kept).
    package static func openName(_ sealed: Data?, inbox: BoxKeyPair) throws -> String {
        guard let sealed else { return "" }
        return String(decoding: try SealedBox.open(Array(sealed), keyPair: inbox), as: UTF8.self)
    }
}
