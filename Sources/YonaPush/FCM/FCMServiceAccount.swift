import Foundation
import YonaDomain

/// The fields of a Firebase service-account JSON the client needs.
package struct FCMServiceAccount: Decodable, Sendable {
    package let projectID: String
    package let privateKey: String
    package let privateKeyID: String
    package let clientEmail: String
    package let tokenURI: String

    package enum CodingKeys: String, CodingKey {
        case projectID = "project_id"
        case privateKey = "private_key"
        case privateKeyID = "private_key_id"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    /// Loads and checks the file; any problem is one line naming `YONA_FCM_SERVICE_ACCOUNT`.
    package static func load(path: String) throws(ConfigurationError) -> FCMServiceAccount {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(variable: "YONA_FCM_SERVICE_ACCOUNT", problem: "names a file that cannot be read: \(path)")
        }
        guard let account = try? JSONDecoder().decode(FCMServiceAccount.self, from: data) else {
            throw ConfigurationError(
                variable: "YONA_FCM_SERVICE_ACCOUNT",
                problem: "is not a service-account JSON (project_id, private_key, private_key_id, client_email, token_uri)")
        }
        guard account.privateKey.contains("PRIVATE KEY"), URL(string: account.tokenURI)?.host != nil else {
            throw ConfigurationError(variable: "YONA_FCM_SERVICE_ACCOUNT", problem: "has no PEM private key or no token_uri")
        }
        return account
    }
}
