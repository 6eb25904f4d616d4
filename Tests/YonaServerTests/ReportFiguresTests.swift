import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

/// The arithmetic of Yona's reports, checked against the examples of Yona's own unit tests (`DayActivityTest`,
/// `TimeZoneGoalTest`, `WeekActivityDto`).
@Suite struct ReportFiguresTests {
    static func time(_ day: String, _ hour: Int, _ minute: Int, _ second: Int = 0) -> Date {
        UserCalendar.calendar.date(bySettingHour: hour, minute: minute, second: second, of: UserCalendar.parseDay(day)!)!
    }

    static func figures(_ spec: GoalSpec, _ spans: [(Int, Int, Int, Int)], day: String = "2016-03-16") -> DayFigures {
        let start = UserCalendar.parseDay(day)!
        return DayFigures.compute(
            spec: spec, activities: spans.map { ActivitySpan(start: time(day, $0.0, $0.1), end: time(day, $0.2, $0.3)) },
            dayStart: start, dayEnd: UserCalendar.adding(days: 1, to: start))
    }

    @Test func weeksRunFromSundayAndAreNamedByTheirMonday() {
        let sunday = UserCalendar.parseDay("2016-01-10")!
        #expect(UserCalendar.week(sunday) == "2016-W02")
        #expect(UserCalendar.parseWeek("2016-W02") == sunday)
        #expect(UserCalendar.parseWeek("2016-w02") == sunday, "case-insensitive, as Yona")
        #expect(UserCalendar.weekStart(Self.time("2016-01-16", 23, 59)) == sunday, "Saturday is the week's last day")
        #expect(UserCalendar.weekStart(sunday) == sunday)
        #expect(UserCalendar.week(UserCalendar.parseDay("2017-12-31")!) == "2018-W01")
        for bad in ["2016-W00", "2016-W54", "2016W02", "2016-W2", "x"] { #expect(UserCalendar.parseWeek(bad) == nil, "\(bad)") }
        for bad in ["2016-03-161234", "2016-02-30", "16-03-16", ""] { #expect(UserCalendar.parseDay(bad) == nil, "\(bad)") }
        #expect(UserCalendar.weekdayName(sunday) == "SUNDAY")
    }

    @Test func spreadCountsMinutesPerQuarterHourAndOverlapOnce() {
        let budget = GoalSpec.budget(maxDurationMinutes: 60)
        let first = Self.figures(budget, [(19, 55, 20, 1)])
        #expect(first.spread[79] == 5 && first.spread[80] == 1 && first.totalMinutes == 6)
        let overlapping = Self.figures(budget, [(19, 48, 19, 50), (19, 46, 19, 59), (20, 1, 20, 17)])
        #expect(overlapping.spread[79] == 13 && overlapping.spread[80] == 14 && overlapping.spread[81] == 2)
        #expect(overlapping.totalMinutes == 29 && overlapping.accomplished && overlapping.minutesBeyondGoal == 0)
        let lastQuarter = Self.figures(budget, [(23, 50, 0, 0)])
        #expect(lastQuarter.totalMinutes == 0, "an end before the start on the same day is nothing")
        #expect(overlapping.spread.reduce(0, +) == overlapping.totalMinutes)
    }

    /// The classifier's and the apps' times carry seconds; Yona's `DayActivity` counts whole minutes of each
    /// non-overlapping segment (the total) and, for the spread, the minutes of the segment's start and end minute.
    @Test func timesWithSecondsCountAsYonaCountedThem() {
        func figures(_ spans: [((Int, Int, Int), (Int, Int, Int))]) -> DayFigures {
            let day = "2016-03-16"
            let start = UserCalendar.parseDay(day)!
            return DayFigures.compute(
                spec: .budget(maxDurationMinutes: 60),
                activities: spans.map { ActivitySpan(start: Self.time(day, $0.0.0, $0.0.1, $0.0.2), end: Self.time(day, $0.1.0, $0.1.1, $0.1.2)) },
                dayStart: start, dayEnd: UserCalendar.adding(days: 1, to: start))
        }
        // within one quarter: the whole minutes elapsed (2 min 30 s is 2)
        let short = figures([((10, 0, 50), (10, 3, 20))])
        #expect(short.totalMinutes == 2 && short.spread[40] == 2 && short.spread.reduce(0, +) == 2)
        // across a quarter's end: 15 - 13 in the first, 16 % 15 in the next; the total is 2 min 38 s, so 2
        let across = figures([((10, 13, 42), (10, 16, 20))])
        #expect(across.spread[40] == 2 && across.spread[41] == 1 && across.totalMinutes == 2)
        // overlapping: the second starts where the first ended (5 min, then 5 min 15 s), one inside adds nothing
        let overlapping = figures([((10, 0, 30), (10, 5, 30)), ((10, 3, 0), (10, 10, 45)), ((10, 4, 0), (10, 6, 0))])
        #expect(overlapping.totalMinutes == 10 && overlapping.spread[40] == 10)
        // a budget judged on the total
        let long = figures([((9, 0, 40), (10, 0, 39))])
        #expect(long.totalMinutes == 59 && long.accomplished)
    }

    /// The hour the clock goes back (Europe/Amsterdam, 2016-10-30 03:00 CEST becomes 02:00 CET): a segment from
    /// 02:50 CEST to 02:10 CET ends in a quarter before the one it starts in. Yona's spread loop adds nothing then;
    /// the total still counts its 20 minutes.
    @Test func aSegmentAcrossTheClockGoingBackAddsNoQuarterTwice() {
        let utc = { (hour: Int, minute: Int) in
            Date(timeIntervalSince1970: 1_477_785_600 + Double(hour * 3600 + minute * 60)) // 2016-10-30T00:00Z
        }
        let dayStart = UserCalendar.parseDay("2016-10-30")!
        #expect(dayStart == utc(-2, 0), "the user's day starts at 00:00 CEST")
        let figures = DayFigures.compute(
            spec: .budget(maxDurationMinutes: 60), activities: [ActivitySpan(start: utc(0, 50), end: utc(1, 10))],
            dayStart: dayStart, dayEnd: UserCalendar.adding(days: 1, to: dayStart))
        #expect(figures.totalMinutes == 20)
        #expect(figures.spread.allSatisfy { $0 <= 15 } && figures.spread.reduce(0, +) == 0, "\(figures.spread)")
    }

    @Test func anActivityAcrossMidnightCountsOnBothDays() {
        let noGo = GoalSpec.budget(maxDurationMinutes: 0)
        let span = ActivitySpan(start: Self.time("2016-03-14", 23, 49), end: Self.time("2016-03-15", 0, 5))
        let monday = UserCalendar.parseDay("2016-03-14")!
        let tuesday = UserCalendar.adding(days: 1, to: monday)
        let before = DayFigures.compute(spec: noGo, activities: [span], dayStart: monday, dayEnd: tuesday)
        let after = DayFigures.compute(spec: noGo, activities: [span], dayStart: tuesday, dayEnd: UserCalendar.adding(days: 1, to: tuesday))
        #expect(before.spread[95] == 11 && before.totalMinutes == 11 && !before.accomplished && before.minutesBeyondGoal == 11)
        #expect(after.spread[0] == 5 && after.totalMinutes == 5)
    }

    @Test func budgetNoGoAndTimeZoneGoalsJudgeADay() {
        let late = Self.figures(.budget(maxDurationMinutes: 60), [(9, 0, 10, 12)])
        #expect(!late.accomplished && late.minutesBeyondGoal == 12)
        let zones = GoalSpec.timeZone(zones: ["05:00-12:30", "13:00-24:00"])
        let outside = Self.figures(zones, [(4, 59, 5, 30), (11, 0, 13, 0)])
        #expect(!outside.accomplished && outside.minutesBeyondGoal == 31)
        let inside = Self.figures(zones, [(5, 0, 8, 0), (11, 0, 12, 30)])
        #expect(inside.accomplished && inside.minutesBeyondGoal == 0)
        #expect(DayFigures.inactive.accomplished && DayFigures.inactive.spread.count == 96)
    }

    @Test func aGoalVersionGovernsTheIntervalsItWasInForceAtTheEndOf() {
        let change = Self.time("2016-03-16", 20, 51)
        let old = GoalVersion(
            id: UUID(), goalID: UUID(), categoryID: UUID(), spec: .budget(maxDurationMinutes: 0),
            creationTime: Self.time("2016-03-01", 10, 0), endTime: change)
        let current = GoalVersion(
            id: old.goalID, goalID: old.goalID, categoryID: old.categoryID, spec: .budget(maxDurationMinutes: 60),
            creationTime: change, endTime: nil)
        let endOfTuesday = UserCalendar.parseDay("2016-03-16")!
        let endOfWednesday = UserCalendar.adding(days: 1, to: endOfTuesday)
        #expect(old.governs(intervalEndingAt: endOfTuesday) && !current.governs(intervalEndingAt: endOfTuesday))
        #expect(
            !old.governs(intervalEndingAt: endOfWednesday) && current.governs(intervalEndingAt: endOfWednesday),
            "the day of a change is the new version's")
    }
}
