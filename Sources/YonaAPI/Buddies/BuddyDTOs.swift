import Foundation
import YonaDomain

/// `POST /users/{u}/buddies/` body, the Yona way.
package struct BuddyRequestBody: StrictBody {
    package struct Embedded: Decodable {
        package struct InvitedUser: Decodable {
            package let firstName: String?
            package let lastName: String?
            package let mobileNumber: String?
            package let emailAddress: String?
            package let nickname: String?
        }
        package let user: InvitedUser?
        package enum CodingKeys: String, CodingKey { case user = "yona:user" }
    }

    package let _embedded: Embedded?
    package let message: String?
    package let sendingStatus: String?
    package let receivingStatus: String?

    package static let allowedKeys: Set<String> = ["_embedded", "message", "sendingStatus", "receivingStatus"]
}

/// E-mail addresses of invitees: one `@`, something on both sides, no spaces or angle brackets.
package enum EmailAddress {
    package static func validated(_ raw: String) throws -> String {
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
package struct BuddyDTO: Encodable, Sendable {
    package struct Embedded: Encodable, Sendable {
        package let user: BuddyUserDTO
        package enum CodingKeys: String, CodingKey { case user = "yona:user" }
    }

    package let sendingStatus: String
    package let receivingStatus: String
    package let lastStatusChangeTime: String
    /// The buddy's "last seen", once it shares and has activity.
    package var lastMonitoredActivityDate: String? = nil
    package let _embedded: Embedded
    package let _links: HALLinks
}

/// `PUT /users/{u}/buddies/{b}` body (test servers): when the relation last changed.
package struct BuddyDatingRequest: StrictBody {
    package let lastStatusChangeTime: String?
    package static let allowedKeys: Set<String> = ["lastStatusChangeTime"]
}
