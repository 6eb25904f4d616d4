import Foundation
import YonaDomain

/// `POST /users/{u}/buddies/` body, the Yona way.
struct BuddyRequestBody: StrictBody {
    struct Embedded: Decodable {
        struct InvitedUser: Decodable {
            let firstName: String?
            let lastName: String?
            let mobileNumber: String?
            let emailAddress: String?
            let nickname: String?
        }
        let user: InvitedUser?
        enum CodingKeys: String, CodingKey { case user = "yona:user" }
    }

    let _embedded: Embedded?
    let message: String?
    let sendingStatus: String?
    let receivingStatus: String?

    static let allowedKeys: Set<String> = ["_embedded", "message", "sendingStatus", "receivingStatus"]
}

/// E-mail addresses of invitees: one `@`, something on both sides, no spaces or angle brackets.
enum EmailAddress {
    static func validated(_ raw: String) throws -> String {
        let parts = raw.split(separator: "@", omittingEmptySubsequences: false)
        guard raw.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !raw.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" || !$0.isASCII })
        else {
            throw YonaError(.invalidEmailAddress)
        }
        return raw
    }
}

/// A buddy as its owner sees it, with the buddy's user embedded.
struct BuddyDTO: Encodable, Sendable {
    struct Embedded: Encodable, Sendable {
        let user: BuddyUserDTO
        enum CodingKeys: String, CodingKey { case user = "yona:user" }
    }

    let sendingStatus: String
    let receivingStatus: String
    let lastStatusChangeTime: String
    /// The buddy's "last seen", once it shares and has activity.
    var lastMonitoredActivityDate: String? = nil
    let _embedded: Embedded
    let _links: HALLinks
}

/// `PUT /users/{u}/buddies/{b}` body (test servers): when the relation last changed.
struct BuddyDatingRequest: StrictBody {
    let lastStatusChangeTime: String?
    static let allowedKeys: Set<String> = ["lastStatusChangeTime"]
}
