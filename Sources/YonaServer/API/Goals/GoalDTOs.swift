import Foundation
import YonaDomain
import YonaStore

/// Goal bodies (`POST`/`PUT /users/{u}/goals/...`), the Yona way: `@type` and the category as a link.
struct GoalRequest: StrictBody {
    struct Links: Decodable {
        struct Link: Decodable { let href: String }
        let activityCategory: Link?
        enum CodingKeys: String, CodingKey { case activityCategory = "yona:activityCategory" }
    }

    let type: String?
    let maxDurationMinutes: LenientInt?
    let zones: [String]?
    let _links: Links?
    let creationTime: String?

    enum CodingKeys: String, CodingKey {
        case type = "@type"
        case maxDurationMinutes, zones, _links, creationTime
    }

    static let allowedKeys: Set<String> = ["@type", "maxDurationMinutes", "zones", "_links", "creationTime"]

    func spec() throws -> GoalSpec {
        try GoalSpec(type: try requireText(type), maxDurationMinutes: maxDurationMinutes?.value, zones: zones)
    }

    /// The activity category id at the end of the `yona:activityCategory` link.
    func categoryID() throws -> UUID {
        guard let href = _links?.activityCategory?.href else { throw YonaError(.missingProperty) }
        let last = href.split(separator: "?").first?.split(separator: "/").last.map(String.init) ?? ""
        guard let id = UUID(uuidString: last) else { throw YonaError(.invalidUUID) }
        return id
    }

    /// Only a test server accepts a goal created (or changed) in the past (api.md); nil when none is given.
    func creationTime(testServer: Bool) throws -> Date? {
        guard let creationTime else { return nil }
        guard testServer else { throw YonaError(.extraProperty) }
        guard let date = YonaDateFormat.parseTimestamp(creationTime) else { throw YonaError(.invalidJSON) }
        return date
    }
}

/// A goal as its owner sees it.
struct GoalDTO: Encodable, Sendable {
    let type: String
    let maxDurationMinutes: Int?
    let zones: [String]?
    /// Time-zone goals only: the quarter hours the zones cover.
    let spreadCells: [Int]?
    let creationTime: String
    let historyItem: Bool
    let _links: HALLinks

    enum CodingKeys: String, CodingKey {
        case type = "@type"
        case maxDurationMinutes, zones, spreadCells, creationTime, historyItem, _links
    }
}

/// An activity category as the apps see it.
struct ActivityCategoryDTO: Encodable, Sendable {
    let name: String
    let description: String
    let _links: HALLinks
}

/// Admin body for an activity category (Yona's admin format).
struct ActivityCategoryRequest: StrictBody {
    let localizableName: [String: String]?
    let localizableDescription: [String: String]?
    let smoothwallCategories: [String]?
    let applications: [String]?
    let mandatoryNoGo: Bool?

    static let allowedKeys: Set<String> = ["localizableName", "localizableDescription", "smoothwallCategories", "applications", "mandatoryNoGo"]
    static let ignoredKeys: Set<String> = ["id", "_links"]

    func toModel(id: UUID) throws -> ActivityCategory {
        guard let localizableName, localizableName[YonaLocale.fallback.rawValue]?.isEmpty == false,
            let smoothwallCategories
        else {
            throw YonaError(.missingProperty)
        }
        return ActivityCategory(
            id: id, names: localizableName, descriptions: localizableDescription ?? [:],
            classifierCategories: smoothwallCategories, applications: applications ?? [],
            mandatoryNoGo: mandatoryNoGo ?? false)
    }
}

/// Admin view: every field, all locales.
struct AdminActivityCategoryDTO: Encodable, Sendable {
    let id: String
    let localizableName: [String: String]
    let localizableDescription: [String: String]
    let smoothwallCategories: [String]
    let applications: [String]
    let mandatoryNoGo: Bool
    let _links: HALLinks
}
