import Foundation

/// What a goal asks of its user, checked.
enum GoalSpec: Sendable, Equatable {
    /// At most this many minutes a day; 0 is a no-go goal (a danger zone).
    case budget(maxDurationMinutes: Int)
    /// Only inside these `HH:mm-HH:mm` zones.
    case timeZone(zones: [String])

    static let budgetType = "BudgetGoal"
    static let timeZoneType = "TimeZoneGoal"

    init(type: String, maxDurationMinutes: Int?, zones: [String]?) throws(YonaError) {
        switch type {
        case Self.budgetType:
            guard let maxDurationMinutes, maxDurationMinutes >= 0, maxDurationMinutes <= 24 * 60, zones == nil else {
                throw YonaError(.invalidGoal)
            }
            self = .budget(maxDurationMinutes: maxDurationMinutes)
        case Self.timeZoneType:
            guard let zones, !zones.isEmpty, maxDurationMinutes == nil, zones.allSatisfy(Self.isValidZone) else {
                throw YonaError(.invalidGoal)
            }
            self = .timeZone(zones: zones)
        default:
            throw YonaError(.invalidGoal)
        }
    }

    var isNoGo: Bool { self == .budget(maxDurationMinutes: 0) }

    var type: String {
        switch self {
        case .budget: Self.budgetType
        case .timeZone: Self.timeZoneType
        }
    }

    /// `08:00-12:00`; the end may be `24:00` and lies after the start.
    static func isValidZone(_ zone: String) -> Bool {
        guard let match = zone.wholeMatch(of: /([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-4]):([0-5][0-9])/) else { return false }
        let start = Int(match.1)! * 60 + Int(match.2)!
        let end = Int(match.3)! * 60 + Int(match.4)!
        return end <= 24 * 60 && end > start
    }
}
