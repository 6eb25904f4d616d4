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
/// devices, the app and the network) counted once; `totalMinutes` the whole minutes of it.
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
    ///
    /// As Yona's `DayActivity`, to the minute also when the times carry seconds (the classifier's and the apps'
    /// do): the activities, in the order they began, become segments that do not overlap (each starts where the
    /// one before it ended, if that was later; one inside another adds nothing). The total is the sum of each
    /// segment's whole minutes. A segment within one quarter hour adds its whole minutes to it; a longer one adds to
    /// its first quarter the minutes from its start minute to the quarter's end, to its last the minutes of the
    /// quarter before its end minute, 15 to each quarter between.
    package static func compute(spec: GoalSpec, activities: [ActivitySpan], dayStart: Date, dayEnd: Date) -> DayFigures {
        var spread = Array(repeating: 0, count: quarters)
        var total = 0
        var previousEnd = dayStart
        for activity in activities.sorted(by: { $0.start < $1.start }) {
            let start = max(activity.start, previousEnd)
            let end = min(activity.end, dayEnd)
            guard start < end else { continue }
            previousEnd = end
            let minutes = Int(end.timeIntervalSince(start) / 60)
            total += minutes
            let startMinute = UserCalendar.minuteOfDay(start)
            let endMinute = end >= dayEnd ? 24 * 60 : UserCalendar.minuteOfDay(end)
            let (first, last) = (startMinute / 15, endMinute / 15)
            // Within one quarter: its whole minutes. An end quarter before the start quarter (the hour the clock goes
            // back) adds nothing to the spread, as Yona's loop from the one to the other.
            guard first < last else {
                if first == last, first < quarters { spread[first] += minutes }
                continue
            }
            spread[first] += 15 - startMinute % 15
            if first + 1 < last { for cell in (first + 1)..<min(last, quarters) { spread[cell] += 15 } }
            if last < quarters { spread[last] += endMinute % 15 }
        }
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
