import Foundation

/// A message as its recipient sees it. Fields without a value are left out.
struct MessageDTO: Encodable, Sendable {
    let type: String
    let messageId: Int64
    let nickname: String
    let creationTime: String
    let isRead: Bool
    let url: String?
    let activityStartTime: String?
    let activityEndTime: String?
    let status: String?
    let _links: HALLinks

    enum CodingKeys: String, CodingKey {
        case type = "@type", messageId, nickname, creationTime, isRead, url, activityStartTime, activityEndTime, status, _links
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
