import FluentKit
import Foundation
import SQLKit
import YonaStore

/// Yona's activity reports of one anonymized user (their own, or a buddy's as the buddy shares them): per day and
/// per week, per goal version, computed from the activities of just the days asked for, so a report costs the
/// same after a year of history as after a week (an index on `(goal_id, end_time)` finds them).
package struct ActivityReportService: Sendable {
    package let db: any Database

    /// Whose reports, and from which day on (the account's creation, or the day a buddy started sharing).
    package struct Subject: Sendable {
        package let userAnonymizedID: UUID
        package let earliestDay: Date

        package init(userAnonymizedID: UUID, earliestDay: Date) {
            self.userAnonymizedID = userAnonymizedID
            self.earliestDay = earliestDay
        }
    }

    package struct DayEntry: Sendable {
        package let version: GoalVersion
        package let figures: DayFigures
    }

    package struct Day: Sendable {
        package let start: Date
        package let entries: [DayEntry]
    }

    package struct WeekDay: Sendable {
        package let start: Date
        package let version: GoalVersion
        package let figures: DayFigures
    }

    package struct WeekEntry: Sendable {
        package let version: GoalVersion
        package let days: [WeekDay]

        /// The week detail's figures: each quarter summed over its days, and the days' total.
        package var spread: [Int] {
            days.reduce(into: Array(repeating: 0, count: DayFigures.quarters)) { sum, day in
                for i in sum.indices { sum[i] += day.figures.spread[i] }
            }
        }
        package var totalMinutes: Int { days.reduce(0) { $0 + $1.figures.totalMinutes } }
    }

    package struct Week: Sendable {
        package let start: Date
        package let entries: [WeekEntry]
    }

    /// A page of days or weeks, newest first, with Yona's counts.
    package struct Page<Item: Sendable>: Sendable {
        package let items: [Item]
        package let number: Int
        package let size: Int
        package let totalElements: Int
        package var totalPages: Int { (totalElements + size - 1) / size }
    }

    /// Yona remembers 490 days; older ones are not counted in a report's totals.
    package static let memoryDays = 490

    // MARK: Days

    package func dayPage(_ subject: Subject, number: Int, size: Int, now: Date = Date()) async throws -> Page<Day> {
        let window = try Self.dayWindow(from: subject.earliestDay, number: number, size: size, now: now)
        return Page(items: try await days(window.starts, of: subject), number: number, size: size, totalElements: window.total)
    }

    /// The days of page `number` (newest first) of a report whose first day is `earliest`, and how many days it has.
    /// A page that ends before the first day is Yona's `error.invalid.date.too.early`.
    package static func dayWindow(from earliest: Date, number: Int, size: Int, now: Date) throws -> (starts: [Date], total: Int) {
        let today = UserCalendar.startOfDay(now)
        let total = max(0, min(UserCalendar.days(from: earliest, to: today) + 1, memoryDays))
        let end = UserCalendar.adding(days: 1 - number * size, to: today)
        guard end >= earliest else { throw YonaError(.dateTooEarly, quoting: UserCalendar.day(end)) }
        let first = max(UserCalendar.adding(days: -(number * size + size - 1), to: today), earliest)
        var starts: [Date] = []
        var day = UserCalendar.adding(days: -1, to: end)
        while day >= first {
            starts.append(day)
            day = UserCalendar.adding(days: -1, to: day)
        }
        return (starts, total)
    }

    package func day(_ start: Date, of subject: Subject) async throws -> Day {
        guard start >= subject.earliestDay else { throw YonaError(.dateTooEarly, quoting: UserCalendar.day(start)) }
        return try await days([start], of: subject)[0]
    }

    /// The goal version a day's or week's details name: one of the subject's, and the one in force at the interval's
    /// end (Yona's checks). Returns all the subject's versions with it.
    private func version(_ versionID: UUID, governing end: Date, of subject: Subject) async throws -> (version: GoalVersion, all: [GoalVersion]) {
        let versions = try await self.versions(of: subject.userAnonymizedID)
        guard let version = versions.first(where: { $0.id == versionID }) else { throw YonaError(.goalNotFound) }
        guard version.governs(intervalEndingAt: end) else { throw YonaError(.activityDateGoalMismatch) }
        return (version, versions)
    }

    /// The version a day's details name; not before the first day.
    package func dayVersion(_ versionID: UUID, day start: Date, of subject: Subject) async throws -> GoalVersion {
        guard start >= subject.earliestDay else { throw YonaError(.dateTooEarly, quoting: UserCalendar.day(start)) }
        return try await version(versionID, governing: UserCalendar.adding(days: 1, to: start), of: subject).version
    }

    /// The version a week's details name; not for a week that ended before the first day.
    package func weekVersion(_ versionID: UUID, week sunday: Date, of subject: Subject) async throws -> (version: GoalVersion, all: [GoalVersion]) {
        let end = UserCalendar.adding(days: 7, to: sunday)
        guard end >= subject.earliestDay else { throw YonaError(.dateTooEarly, quoting: UserCalendar.week(sunday)) }
        return try await version(versionID, governing: end, of: subject)
    }

    /// The day detail of one goal version: the version must be the one in force that day.
    package func dayDetail(_ start: Date, versionID: UUID, of subject: Subject) async throws -> DayEntry {
        let version = try await dayVersion(versionID, day: start, of: subject)
        let end = UserCalendar.adding(days: 1, to: start)
        let spans = try await activities(of: [version.goalID], from: start, to: end)
        let figures = DayFigures.compute(spec: version.spec, activities: spans[version.goalID] ?? [], dayStart: start, dayEnd: end)
        return DayEntry(version: version, figures: figures)
    }

    /// One activity as stored, within one day: where it was measured and, sealed, in which app.
    package struct RawActivity: Sendable {
        package let span: ActivitySpan
        /// Nil for a device since removed.
        package let deviceAnonymizedID: UUID?
        package let sealedApp: Data?
    }

    /// The activities behind a day detail (Yona's raw activities), each cut to the day, in the order they began.
    package func rawActivities(_ start: Date, versionID: UUID, of subject: Subject) async throws -> [RawActivity] {
        let version = try await dayVersion(versionID, day: start, of: subject)
        let end = UserCalendar.adding(days: 1, to: start)
        return try await db.sql.raw(
            """
            SELECT device_anonymized_id, start_time, end_time, app_sealed FROM \(unsafeRaw: Activity.schema)
            WHERE goal_id = \(bind: version.goalID) AND end_time > \(bind: start) AND start_time < \(bind: end)
            ORDER BY start_time
            """
        ).all().map { row in
            RawActivity(
                span: ActivitySpan(
                    start: max(start, try row.decode(column: "start_time", as: Date.self)),
                    end: min(end, try row.decode(column: "end_time", as: Date.self))),
                deviceAnonymizedID: try row.decode(column: "device_anonymized_id", as: UUID?.self),
                sealedApp: try row.decode(column: "app_sealed", as: Data?.self))
        }
    }

    /// The given days of a subject (only its goals in `categories`, when given); days before its first day are left out.
    /// `versions`: the subject's goal versions when the caller has them already.
    package func days(_ starts: [Date], of subject: Subject, categories: Set<UUID>? = nil, versions known: [GoalVersion]? = nil) async throws -> [Day]
    {
        let starts = starts.filter { $0 >= subject.earliestDay }
        guard let oldest = starts.min(), let newest = starts.max() else { return [] }
        var all = known ?? []
        if known == nil { all = try await self.versions(of: subject.userAnonymizedID) }
        let versions = all.filter { categories?.contains($0.categoryID) ?? true }
        let spans = try await activities(of: Array(Set(versions.map(\.goalID))), from: oldest, to: UserCalendar.adding(days: 1, to: newest))
        return starts.map { start in
            let end = UserCalendar.adding(days: 1, to: start)
            let entries = versions.filter { $0.governs(intervalEndingAt: end) }.map { version in
                DayEntry(
                    version: version,
                    figures: DayFigures.compute(spec: version.spec, activities: spans[version.goalID] ?? [], dayStart: start, dayEnd: end))
            }
            return Day(start: start, entries: entries)
        }
    }

    // MARK: Weeks

    /// Weeks are counted as Yona's tests count them: every Sunday-to-Saturday week from the one holding the first day on.
    package func weekPage(_ subject: Subject, number: Int, size: Int, now: Date = Date()) async throws -> Page<Week> {
        let current = UserCalendar.weekStart(now)
        let firstWeek = UserCalendar.weekStart(subject.earliestDay)
        let total = min(UserCalendar.days(from: firstWeek, to: current) / 7 + 1, (Self.memoryDays + 6) / 7)
        let end = UserCalendar.adding(days: 7 * (1 - number * size), to: current)
        guard end >= subject.earliestDay else { throw YonaError(.dateTooEarly, quoting: UserCalendar.week(end)) }
        let first = max(UserCalendar.adding(days: -7 * (number * size + size - 1), to: current), firstWeek)
        var starts: [Date] = []
        var week = UserCalendar.adding(days: -7, to: end)
        while week >= first {
            starts.append(week)
            week = UserCalendar.adding(days: -7, to: week)
        }
        return Page(items: try await weeks(starts, of: subject, now: now), number: number, size: size, totalElements: total)
    }

    package func week(_ sunday: Date, of subject: Subject, now: Date = Date()) async throws -> Week {
        guard UserCalendar.adding(days: 7, to: sunday) >= subject.earliestDay else {
            throw YonaError(.dateTooEarly, quoting: UserCalendar.week(sunday))
        }
        return try await weeks([sunday], of: subject, now: now)[0]
    }

    package func weekDetail(_ sunday: Date, versionID: UUID, of subject: Subject, now: Date = Date()) async throws -> WeekEntry {
        let (version, versions) = try await weekVersion(versionID, week: sunday, of: subject)
        let spans = try await activities(of: [version.goalID], from: sunday, to: UserCalendar.adding(days: 7, to: sunday))
        return weekEntry(version, sunday: sunday, versions: versions, spans: spans, earliest: subject.earliestDay, now: now)
    }

    private func weeks(_ sundays: [Date], of subject: Subject, now: Date) async throws -> [Week] {
        guard let oldest = sundays.min(), let newest = sundays.max() else { return [] }
        let versions = try await self.versions(of: subject.userAnonymizedID)
        let spans = try await activities(of: Array(Set(versions.map(\.goalID))), from: oldest, to: UserCalendar.adding(days: 7, to: newest))
        return sundays.map { sunday in
            let end = UserCalendar.adding(days: 7, to: sunday)
            let entries = versions.filter { $0.governs(intervalEndingAt: end) }.map { version in
                weekEntry(version, sunday: sunday, versions: versions, spans: spans, earliest: subject.earliestDay, now: now)
            }
            return Week(start: sunday, entries: entries)
        }
    }

    /// The days of a week a goal shows: from the first day (account, sharing) and up to today, each under the version
    /// of the goal in force that day (an update mid-week leaves the earlier days under the earlier version).
    private func weekEntry(
        _ version: GoalVersion, sunday: Date, versions: [GoalVersion], spans: [UUID: [ActivitySpan]], earliest: Date, now: Date
    ) -> WeekEntry {
        var days: [WeekDay] = []
        for offset in 0..<7 {
            let start = UserCalendar.adding(days: offset, to: sunday)
            guard start >= earliest, start <= now else { continue }
            let end = UserCalendar.adding(days: 1, to: start)
            guard let dayVersion = versions.first(where: { $0.goalID == version.goalID && $0.governs(intervalEndingAt: end) }) else { continue }
            let figures = DayFigures.compute(spec: dayVersion.spec, activities: spans[version.goalID] ?? [], dayStart: start, dayEnd: end)
            days.append(WeekDay(start: start, version: dayVersion, figures: figures))
        }
        return WeekEntry(version: version, days: days)
    }

    // MARK: Loading

    /// Every version of every goal of the user: the goals in force and their history items.
    package func versions(of userAnonymizedID: UUID) async throws -> [GoalVersion] {
        try await versions(ofAnonymizedUsers: [userAnonymizedID])[userAnonymizedID] ?? []
    }

    package func versions(ofAnonymizedUsers ids: [UUID]) async throws -> [UUID: [GoalVersion]] {
        guard !ids.isEmpty else { return [:] }
        let goals = try await Goal.query(on: db).filter(\.$userAnonymized.$id ~~ ids).all()
        let owners = Dictionary(uniqueKeysWithValues: goals.map { ($0.id!, $0.$userAnonymized.id) })
        let history = goals.isEmpty ? [] : try await GoalHistoryItem.query(on: db).filter(\.$goal.$id ~~ goals.map { $0.id! }).all()
        var result: [UUID: [GoalVersion]] = [:]
        for goal in goals {
            result[goal.$userAnonymized.id, default: []].append(
                GoalVersion(
                    id: goal.id!, goalID: goal.id!, categoryID: goal.$activityCategory.id, spec: goal.spec,
                    creationTime: goal.creationTime, endTime: nil))
        }
        for item in history {
            guard let owner = owners[item.$goal.id] else { continue }
            result[owner, default: []].append(
                GoalVersion(
                    id: item.id!, goalID: item.$goal.id, categoryID: item.$activityCategory.id, spec: item.spec,
                    creationTime: item.creationTime, endTime: item.endTime))
        }
        return result
    }

    /// The activities of some goals that overlap `[from, to)`, per goal. Three columns through SQLKit: building a
    /// Fluent model per row was 60% of a week page's time (`scripts/bench reports`, docs/performance.md).
    package func activities(of goalIDs: [UUID], from: Date, to: Date) async throws -> [UUID: [ActivitySpan]] {
        guard !goalIDs.isEmpty else { return [:] }
        let rows = try await db.sql.raw(
            """
            SELECT goal_id, start_time, end_time FROM \(unsafeRaw: Activity.schema)
            WHERE goal_id IN (\(binds: goalIDs)) AND end_time > \(bind: from) AND start_time < \(bind: to)
            """
        ).all()
        var spans: [UUID: [ActivitySpan]] = [:]
        for row in rows {
            let span = ActivitySpan(
                start: try row.decode(column: "start_time", as: Date.self), end: try row.decode(column: "end_time", as: Date.self))
            spans[try row.decode(column: "goal_id", as: UUID.self), default: []].append(span)
        }
        return spans
    }

    package init(db: any Database) {
        self.db = db
    }
}
