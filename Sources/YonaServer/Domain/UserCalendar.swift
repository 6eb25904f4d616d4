import Foundation

/// Yona's calendar of a user: days the apps see (app last opened, activity days) are days in the user's time
/// zone, which is Yona's default, Europe/Amsterdam, for every user until time zones can be set.
enum UserCalendar {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Amsterdam") ?? TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The day `date` falls on for a user, as `yyyy-MM-dd`.
    static func day(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }
}
