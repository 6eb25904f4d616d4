import Foundation

/// Yona's calendar of a user: days the apps see (app last opened, activity days) are days in the user's time
/// zone, which is Yona's default, Europe/Amsterdam, for every user until time zones can be set. Weeks run from
/// Sunday to Saturday; a week is named by the ISO week of its Monday (`2016-W02` is Sunday 2016-01-10 to
/// Saturday 2016-01-16).
package enum UserCalendar {
    package static let timeZoneID = "Europe/Amsterdam"

    package static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: timeZoneID) ?? TimeZone(identifier: "UTC")!
        return calendar
    }()

    static let isoCalendar: Calendar = {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = UserCalendar.calendar.timeZone
        return calendar
    }()

    /// The day `date` falls on for a user, as `yyyy-MM-dd`.
    package static func day(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return CalendarText.day(year: c.year!, month: c.month!, day: c.day!)
    }

    /// The instant the user's day holding `date` starts.
    package static func startOfDay(_ date: Date) -> Date { calendar.startOfDay(for: date) }

    /// The start of the day `days` later (or earlier); 23 or 25 hours away across a clock change.
    package static func adding(days: Int, to dayStart: Date) -> Date {
        calendar.date(byAdding: .day, value: days, to: dayStart) ?? dayStart.addingTimeInterval(Double(days) * 86_400)
    }

    /// Whole days from one day start to another.
    package static func days(from start: Date, to end: Date) -> Int {
        calendar.dateComponents([.day], from: startOfDay(start), to: startOfDay(end)).day ?? 0
    }

    /// `yyyy-MM-dd`, strictly, as the start of that day; nil for anything else (`2016-03-161234`, `2016-02-30`).
    package static func parseDay(_ text: String) -> Date? {
        guard let fields = text.numbers(inShape: "9999-99-99"), case (let year, let month, let day) = (fields[0], fields[1], fields[2]),
            let date = calendar.date(from: DateComponents(year: year, month: month, day: day))
        else { return nil }
        return self.day(date) == text ? date : nil
    }

    /// The Sunday that starts the week holding `date`.
    package static func weekStart(_ date: Date) -> Date {
        let day = startOfDay(date)
        return adding(days: -(calendar.component(.weekday, from: day) - 1), to: day)
    }

    /// `YYYY-Www` of the week starting on `sunday`: the ISO week of the Monday after it.
    package static func week(_ sunday: Date) -> String {
        let monday = adding(days: 1, to: sunday)
        let c = isoCalendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: monday)
        return CalendarText.week(year: c.yearForWeekOfYear!, week: c.weekOfYear!)
    }

    /// The Sunday starting week `YYYY-Www` (case-insensitive); nil for anything else.
    package static func parseWeek(_ text: String) -> Date? {
        guard let fields = text.uppercased().numbers(inShape: "9999-W99"), case (let year, let week) = (fields[0], fields[1]),
            (1...53).contains(week),
            let monday = isoCalendar.date(from: DateComponents(weekday: 2, weekOfYear: week, yearForWeekOfYear: year))
        else { return nil }
        let sunday = adding(days: -1, to: startOfDay(monday))
        return self.week(sunday) == text.uppercased() ? sunday : nil
    }

    /// Yona's name of the weekday of a day: `SUNDAY` … `SATURDAY`.
    package static func weekdayName(_ date: Date) -> String {
        ["SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"][calendar.component(.weekday, from: date) - 1]
    }

    /// Minutes since the start of the user's day on the wall clock (so a day has 1440 of them, clock changes or not);
    /// seconds are dropped, as Yona counts whole minutes.
    package static func minuteOfDay(_ date: Date) -> Int {
        let c = calendar.dateComponents([.hour, .minute], from: date)
        return c.hour! * 60 + c.minute!
    }
}
