import Foundation

/// A message as its recipient sees it. Fields without a value are left out, except `url` on a buddy's
/// goal-conflict copy, which is `null` until the user discloses it (api.md).
package struct MessageDTO: Encodable, Sendable {
    package let type: String
    package let messageId: Int64
    package let nickname: String
    package let creationTime: String
    package let isRead: Bool
    package let url: String?
    package let urlIsExplicitNull: Bool
    package let activityStartTime: String?
    package let activityEndTime: String?
    package let status: String?
    package let message: String?
    package let reason: String?
    package let change: String?
    package let oldName: String?
    package let newName: String?
    /// Comments: the first message of the thread, in this inbox.
    package var threadHeadMessageId: Int64? = nil
    /// Requests and disconnects embed the sender's user as `yona:user`.
    package let _embedded: Embedded?
    package let _links: HALLinks

    package struct EmbeddedUser: Encodable, Sendable {
        package let firstName: String
        package let lastName: String
        package let mobileNumber: String
        package let nickname: String
        package let _links: HALLinks?
    }

    package struct Embedded: Encodable, Sendable {
        package let user: EmbeddedUser
        package enum CodingKeys: String, CodingKey { case user = "yona:user" }
    }

    package enum CodingKeys: String, CodingKey {
        case type = "@type"
        case messageId, nickname, creationTime, isRead, url, activityStartTime, activityEndTime, status, message, reason
        case change, oldName, newName, threadHeadMessageId, _embedded, _links
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(messageId, forKey: .messageId)
        try c.encode(nickname, forKey: .nickname)
        try c.encode(creationTime, forKey: .creationTime)
        try c.encode(isRead, forKey: .isRead)
        if let url { try c.encode(url, forKey: .url) } else if urlIsExplicitNull { try c.encodeNil(forKey: .url) }
        try c.encodeIfPresent(activityStartTime, forKey: .activityStartTime)
        try c.encodeIfPresent(activityEndTime, forKey: .activityEndTime)
        try c.encodeIfPresent(status, forKey: .status)
        try c.encodeIfPresent(message, forKey: .message)
        try c.encodeIfPresent(reason, forKey: .reason)
        try c.encodeIfPresent(change, forKey: .change)
        try c.encodeIfPresent(oldName, forKey: .oldName)
        try c.encodeIfPresent(threadHeadMessageId, forKey: .threadHeadMessageId)
        try c.encodeIfPresent(newName, forKey: .newName)
        try c.encodeIfPresent(_embedded, forKey: ._embedded)
        try c.encode(_links, forKey: ._links)
    }
}

/// A page of messages.
package struct MessagePageDTO: Encodable {
    package struct PageInfo: Encodable {
        package let size: Int
        package let totalElements: Int
        package let totalPages: Int
        package let number: Int
    }

    package let _embedded: [String: [MessageDTO]]?
    package let page: PageInfo
    package let _links: HALLinks
}

/// `POST .../messages/{id}/{action}` body.
package struct MessageActionRequest: StrictBody {
    package let properties: [String: String]?
    package static let allowedKeys: Set<String> = ["properties"]
}

/// The answer to a message action.
package struct MessageActionResultDTO: Encodable {
    package struct Properties: Encodable { let status: String }
    package let properties: Properties
    package let _embedded: [String: [MessageDTO]]
}

/// `POST /userAnonymized/{ua}/networkActivity/` body, as the classifier sends it.
package struct NetworkActivityRequest: StrictBody {
    package let deviceIndex: Int?
    package let categories: [String]?
    package let url: String?
    package let eventTime: String?
    package let eventId: String?
    package static let allowedKeys: Set<String> = ["deviceIndex", "categories", "url", "eventTime", "eventId"]
}

/// `POST /users/{u}/devices/{d}/appActivity/` body: what apps the phone itself saw in use.
package struct AppActivityRequest: StrictBody {
    package struct Item: Decodable {
        package let application: String?
        package let startTime: String?
        package let endTime: String?
    }
    package let deviceDateTime: String?
    package let activities: [Item]?
    package static let allowedKeys: Set<String> = ["deviceDateTime", "activities"]
}
