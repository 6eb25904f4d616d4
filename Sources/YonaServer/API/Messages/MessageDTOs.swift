import Foundation

/// A message as its recipient sees it. Fields without a value are left out, except `url` on a buddy's
/// goal-conflict copy, which is `null` until the user discloses it (api.md).
struct MessageDTO: Encodable, Sendable {
    let type: String
    let messageId: Int64
    let nickname: String
    let creationTime: String
    let isRead: Bool
    let url: String?
    let urlIsExplicitNull: Bool
    let activityStartTime: String?
    let activityEndTime: String?
    let status: String?
    let message: String?
    let reason: String?
    let change: String?
    let oldName: String?
    let newName: String?
    /// Comments: the first message of the thread, in this inbox.
    var threadHeadMessageId: Int64? = nil
    /// Requests and disconnects embed the sender's user as `yona:user`.
    let _embedded: Embedded?
    let _links: HALLinks

    struct EmbeddedUser: Encodable, Sendable {
        let firstName: String
        let lastName: String
        let mobileNumber: String
        let nickname: String
        let _links: HALLinks?
    }

    struct Embedded: Encodable, Sendable {
        let user: EmbeddedUser
        enum CodingKeys: String, CodingKey { case user = "yona:user" }
    }

    enum CodingKeys: String, CodingKey {
        case type = "@type"
        case messageId, nickname, creationTime, isRead, url, activityStartTime, activityEndTime, status, message, reason
        case change, oldName, newName, threadHeadMessageId, _embedded, _links
    }

    func encode(to encoder: any Encoder) throws {
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
struct MessagePageDTO: Encodable {
    struct PageInfo: Encodable {
        let size: Int
        let totalElements: Int
        let totalPages: Int
        let number: Int
    }

    let _embedded: [String: [MessageDTO]]?
    let page: PageInfo
    let _links: HALLinks
}

/// `POST .../messages/{id}/{action}` body.
struct MessageActionRequest: StrictBody {
    let properties: [String: String]?
    static let allowedKeys: Set<String> = ["properties"]
}

/// The answer to a message action.
struct MessageActionResultDTO: Encodable {
    struct Properties: Encodable { let status: String }
    let properties: Properties
    let _embedded: [String: [MessageDTO]]
}

/// `POST /userAnonymized/{ua}/networkActivity/` body, as the classifier sends it.
struct NetworkActivityRequest: StrictBody {
    let deviceIndex: Int?
    let categories: [String]?
    let url: String?
    let eventTime: String?
    let eventId: String?
    static let allowedKeys: Set<String> = ["deviceIndex", "categories", "url", "eventTime", "eventId"]
}

/// `POST /users/{u}/devices/{d}/appActivity/` body: what apps the phone itself saw in use.
struct AppActivityRequest: StrictBody {
    struct Item: Decodable {
        let application: String?
        let startTime: String?
        let endTime: String?
    }
    let deviceDateTime: String?
    let activities: [Item]?
    static let allowedKeys: Set<String> = ["deviceDateTime", "activities"]
}
