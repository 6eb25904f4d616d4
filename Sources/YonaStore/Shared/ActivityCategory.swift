import FluentKit
import Foundation

/// Shared reference data: what the classifier's and the apps' names mean. Personal data never lives here.
package final class ActivityCategory: Model, @unchecked Sendable {
    package static let schema = "activity_categories"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    /// Localized names, keyed by locale (`en-US`, `nl-NL`).
    @Field(key: "names") package var names: [String: String]
    @Field(key: "descriptions") package var descriptions: [String: String]
    /// The network classifier's category names that map here.
    @Field(key: "classifier_categories") package var classifierCategories: [String]
    /// App names (as `appActivity` reports them) that map here.
    @Field(key: "applications") package var applications: [String]
    /// Every user gets a no-go goal on it that cannot be removed.
    @Field(key: "mandatory_no_go") package var mandatoryNoGo: Bool

    package init() {}

    package init(
        id: UUID, names: [String: String], descriptions: [String: String], classifierCategories: [String],
        applications: [String], mandatoryNoGo: Bool
    ) {
        self.id = id
        self.names = names
        self.descriptions = descriptions
        self.classifierCategories = classifierCategories
        self.applications = applications
        self.mandatoryNoGo = mandatoryNoGo
    }

    /// Takes every field but the id from `other` (an edit, or an import's entry for this category).
    package func adopt(_ other: ActivityCategory) {
        names = other.names
        descriptions = other.descriptions
        classifierCategories = other.classifierCategories
        applications = other.applications
        mandatoryNoGo = other.mandatoryNoGo
    }
}
