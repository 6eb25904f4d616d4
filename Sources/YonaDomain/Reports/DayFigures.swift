import Foundation

/// One version of a goal and the time it was in force: the goal as it is now (its own id), or an earlier version
/// (a history item, its own id). Activities are recorded against the goal; links name the version.
package struct GoalVersion: Sendable {
    package let id: UUID
    package let goalID: UUID
    package let categoryID: UUID
    package let spec: GoalSpec
    package let creationTime: Date
    package let endTime: Date?

    /// Yona's rule for which version an interval (a day, a week) shows: the one that existed before the interval
    /// ended and was still in force at its end. So a goal made or changed during a day governs that whole day.
    package func governs(intervalEndingAt end: Date) -> Bool {
        creationTime < end && (endTime.map { $0 > end } ?? true)
    }
}

/// What one day of one goal came to, as Yona reports it: `spread` holds the minutes of activity in each of the
/// day's 96 quarter hours (wall-clock, so a day with a clock change has 96 too), with overlapping activity (two
/// devices, the app and the network) counted once; the total is their sum.
package struct DayFigures: Sendable, Equatable {
    package static let quarters = 96

    package var spread: [Int]
    package var totalMinutes: Int
    package var accomplished: Bool
    package var minutesBeyondGoal: Int

    /// A day without activity.
    package static let inactive = DayFigures(spread: Array(repeating: 0, count: quarters), totalMinutes: 0, accomplished: true, minutesBeyondGoal: 0)

    /// The figures of the day `[dayStart, dayEnd)` for a goal asking `spec`, from its activities (any that overlap
    /// the day; the parts outside it are cut off, so an activity across midnight counts on both days).
    package static func compute(spec: GoalSpec, activities: [ActivitySpan], dayStart: Date, dayEnd: Date) -> DayFigures {
        var minutes: [(Int, Int)] = []
        for activity in activities {
            let start = max(activity.start, dayStart)
            let end = min(activity.end, dayEnd)
            guard start < end else { continue }
            let from = UserCalendar.minuteOfDay(start)
            let to = end >= dayEnd ? 1440 : UserCalendar.minuteOfDay(end)
            if to > from { minutes.append((from, to)) }
        }
        var spread = Array(repeating: 0, count: quarters)
        var total = 0
        // The union of the intervals, each minute once.
        var covered: (Int, Int)?
        func flush(_ interval: (Int, Int)) {
            total += interval.1 - interval.0
            var cell = interval.0 / 15
            while cell * 15 < interval.1, cell < quarters {
                spread[cell] += min(interval.1, (cell + 1) * 15) - max(interval.0, cell * 15)
                cell += 1
            }
        }
        for interval in minutes.sorted(by: { $0.0 < $1.0 }) {
            if let current = covered, interval.0 <= current.1 {
                covered = (current.0, max(current.1, interval.1))
            } else {
                if let current = covered { flush(current) }
                covered = interval
            }
        }
        if let current = covered { flush(current) }
        return judged(spread: spread, total: total, by: spec)
    }

    /// Budget: within the budget (a no-go goal's is 0). Time zones: nothing outside the allowed quarters.
    package static func judged(spread: [Int], total: Int, by spec: GoalSpec) -> DayFigures {
        switch spec {
        case .budget(let max):
            return DayFigures(spread: spread, totalMinutes: total, accomplished: total <= max, minutesBeyondGoal: Swift.max(0, total - max))
        case .timeZone:
            let allowed = Set(spec.spreadCells ?? [])
            let outside = spread.indices.filter { !allowed.contains($0) }.reduce(0) { $0 + spread[$1] }
            return DayFigures(spread: spread, totalMinutes: total, accomplished: outside == 0, minutesBeyondGoal: min(total, outside))
        }
    }
}

/// When a device was busy with a goal's category.
package struct ActivitySpan: Sendable {
    package let start: Date
    package let end: Date
}
