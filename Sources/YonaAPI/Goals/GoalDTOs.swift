import Foundation
import YonaDomain
import YonaStore

/// Goal bodies (`POST`/`PUT /users/{u}/goals/...`), the Yona way: `@type` and the category as a link.
package struct GoalRequest: StrictBody {
    package struct Links: Decodable {
        package struct Link: Decodable { let href: String }
        package let activityCategory: Link?
        package enum CodingKeys: String, CodingKey { case activityCategory = "yona:activityCategory" }
    }

    package let type: String?
    package let maxDurationMinutes: LenientInt?
    package let zones: [String]?
    package let _links: Links?
    package let creationTime: String?

    package enum CodingKeys: String, CodingKey {
        case type = "@type"
        case maxDurationMinutes, zones, _links, creationTime
    }

    package static let allowedKeys: Set<String> = ["@type", "maxDurationMinutes", "zones", "_links", "creationTime"]

    package func spec() throws -> GoalSpec {
        try GoalSpec(type: try requireText(type), maxDurationMinutes: maxDurationMinutes?.value, zones: zones)
    }

    /// The activity category id at the end of the `yona:activityCategory` link.
    package func categoryID() throws -> UUID {
        guard let href = _links?.activityCategory?.href else { throw YonaError(.missingProperty) }
        let last = href.split(separator: "?").first?.split(separator: "/").last.map(String.init) ?? ""
        guard let id = UUID(uuidString: last) else { throw YonaError(.invalidUUID) }
        return id
    }

    /// Only a test server accepts a goal created (or changed) in the past (api.md); nil when none is given.
    package func creationTime(testServer: Bool) throws -> Date? {
        guard let creationTime else { return nil }
        guard testServer else { throw YonaError(.extraProperty) }
        guard let date = YonaDateFormat.parseTimestamp(creationTime) else { throw YonaError(.invalidJSON) }
        return date
    }
}

/// A goal as its owner sees it.
package struct GoalDTO: Encodable, Sendable {
    package let type: String
    package let maxDurationMinutes: Int?
    package let zones: [String]?
    /// Time-zone goals only: the quarter hours the zones cover.
    package let spreadCells: [Int]?
    package let creationTime: String
    package let historyItem: Bool
    package let _links: HALLinks

    package enum CodingKeys: String, CodingKey {
        case type = "@type"
        case maxDurationMinutes, zones, spreadCells, creationTime, historyItem, _links
    }
}

/// An activity category as the apps see it.
package struct ActivityCategoryDTO: Encodable, Sendable {
    package let name: String
    package let description: String
    package let _links: HALLinks
}

/// Admin body for an activity category (Yona's admin format).
package struct ActivityCategoryRequest: StrictBody {
    package let localizableName: [String: String]?
    package let localizableDescription: [String: String]?
    package let smoothwallCategories: [String]?
    package let applications: [String]?
    package let mandatoryNoGo: Bool?

    package static let allowedKeys: Set<String> = [
        "localizableName", "localizableDescription", "smoothwallCategories", "applications", "mandatoryNoGo",
    ]
    package static let ignoredKeys: Set<String> = ["id", "_links"]

    package func toModel(id: UUID) throws -> ActivityCategory {
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
package struct AdminActivityCategoryDTO: Encodable, Sendable {
    package let id: String
    package let localizableName: [String: String]
    package let localizableDescription: [String: String]
    package let smoothwallCategories: [String]
    package let applications: [String]
    package let mandatoryNoGo: Bool
    package let _links: HALLinks
}
