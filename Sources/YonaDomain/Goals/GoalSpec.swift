import Foundation
import YonaStore

/// What a goal asks of its user, checked with Yona's rules and codes.
package enum GoalSpec: Sendable, Equatable {
    /// At most this many minutes a day; 0 is a no-go goal (a danger zone).
    case budget(maxDurationMinutes: Int)
    /// Only inside these `HH:mm-HH:mm` zones.
    case timeZone(zones: [String])

    package static let budgetType = "BudgetGoal"
    package static let timeZoneType = "TimeZoneGoal"

    /// As Yona, a property of the other goal type is ignored, not refused.
    package init(type: String, maxDurationMinutes: Int?, zones: [String]?) throws(YonaError) {
        switch type {
        case Self.budgetType:
            guard let maxDurationMinutes else { throw YonaError(.missingProperty) }
            guard maxDurationMinutes >= 0 else { throw YonaError(.goalBudgetNegative) }
            self = .budget(maxDurationMinutes: maxDurationMinutes)
        case Self.timeZoneType:
            guard let zones else { throw YonaError(.missingProperty) }
            guard !zones.isEmpty else { throw YonaError(.goalZoneRequired) }
            for zone in zones { try Self.checkZone(zone) }
            self = .timeZone(zones: zones)
        default:
            throw YonaError(.invalidGoal)
        }
    }

    package init(kind: String, maxDurationMinutes: Int?, zones: [String]) {
        self = kind == Self.timeZoneType ? .timeZone(zones: zones) : .budget(maxDurationMinutes: maxDurationMinutes ?? 0)
    }

    package var isNoGo: Bool { self == .budget(maxDurationMinutes: 0) }

    package var type: String {
        switch self {
        case .budget: Self.budgetType
        case .timeZone: Self.timeZoneType
        }
    }

    /// The quarter hours (0...95) the zones cover, sorted and each once, as Yona's `spreadCells`.
    package var spreadCells: [Int]? {
        guard case .timeZone(let zones) = self else { return nil }
        var cells = Set<Int>()
        for zone in zones {
            guard let (from, to) = Self.minutes(zone) else { continue }
            cells.formUnion(from / 15..<to / 15)
        }
        return cells.sorted()
    }

    /// Yona's checks, in Yona's order: the shape, each end's hour and quarter, the end after the start, and
    /// nothing beyond 24:00.
    package static func checkZone(_ zone: String) throws(YonaError) {
        guard let (fromHour, fromMinute, toHour, toMinute) = parts(zone) else { throw YonaError(.goalZoneFormat) }
        for (hour, minute) in [(fromHour, fromMinute), (toHour, toMinute)] {
            guard hour <= 24 else { throw YonaError(.goalZoneHour) }
            guard minute % 15 == 0 else { throw YonaError(.goalZoneQuarterHour) }
        }
        guard toHour * 60 + toMinute > fromHour * 60 + fromMinute else { throw YonaError(.goalZoneToNotBeyondFrom) }
        guard (fromHour < 24 || fromMinute == 0) && (toHour < 24 || toMinute == 0) else { throw YonaError(.goalZoneBeyond24) }
    }

    /// Start and end of a valid zone in minutes after midnight.
    package static func minutes(_ zone: String) -> (Int, Int)? {
        guard let (fromHour, fromMinute, toHour, toMinute) = parts(zone) else { return nil }
        return (fromHour * 60 + fromMinute, toHour * 60 + toMinute)
    }

    /// `HH:mm-HH:mm` with hours `00`–`29` and minutes `00`–`59` (the shape Yona checks first; the ranges after).
    private static func parts(_ zone: String) -> (Int, Int, Int, Int)? {
        guard let n = zone.numbers(inShape: "99:99-99:99"), n[0] <= 29, n[1] <= 59, n[2] <= 29, n[3] <= 59 else { return nil }
        return (n[0], n[1], n[2], n[3])
    }
}

extension Goal {
    /// What the goal asks now.
    package var spec: GoalSpec { GoalSpec(kind: kind, maxDurationMinutes: maxDurationMinutes, zones: zones) }
}

extension GoalHistoryItem {
    /// What the goal asked in this earlier version.
    package var spec: GoalSpec { GoalSpec(kind: kind, maxDurationMinutes: maxDurationMinutes, zones: zones) }
}
