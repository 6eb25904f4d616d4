import Foundation
import YonaDomain

/// The apps' wire formats: `yyyy-MM-dd'T'HH:mm:ss.SSSZ` in UTC and `yyyy-MM-dd`.
package enum YonaDateFormat {
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    package static func timestamp(_ date: Date) -> String {
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        // Truncated like Java does; the microsecond absorbs binary floating-point error (0.986 stored as 0.98599…).
        let millis = min(999, ((c.nanosecond ?? 0) + 1_000) / 1_000_000)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000",
            c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!, millis)
    }

    /// `yyyy-MM-dd'T'HH:mm:ss.SSSZ` in the users' time zone (`UserCalendar`), with its offset (`+0100`, `+0200`): how
    /// Yona prints the times of a day's activities.
    package static func zonedTimestamp(_ date: Date) -> String {
        let zone = UserCalendar.calendar.timeZone
        let offset = zone.secondsFromGMT(for: date)
        let shifted = date.addingTimeInterval(TimeInterval(offset))
        let local = timestamp(shifted).dropLast(5)
        let minutes = abs(offset) / 60
        return local + (offset < 0 ? "-" : "+") + String(format: "%02d%02d", minutes / 60, minutes % 60)
    }

    /// Parses `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (any numeric offset, `Z` too) as the apps and analyzers send it.
    package static func parseTimestamp(_ text: String) -> Date? {
        guard let m = text.wholeMatch(of: /(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})/) else { return nil }
        var components = DateComponents()
        components.year = Int(m.1)
        components.month = Int(m.2)
        components.day = Int(m.3)
        components.hour = Int(m.4)
        components.minute = Int(m.5)
        components.second = Int(m.6)
        guard let base = utc.date(from: components), utc.dateComponents([.month, .day], from: base).month == components.month else { return nil }
        let fraction = m.7.map { Double("0." + $0) ?? 0 } ?? 0
        var offset = 0
        if m.8 != "Z" {
            let digits = m.8.dropFirst().replacingOccurrences(of: ":", with: "")
            offset = (Int(digits.prefix(2))! * 3600 + Int(digits.suffix(2))! * 60) * (m.8.first == "-" ? -1 : 1)
        }
        return base.addingTimeInterval(fraction - Double(offset))
    }

    package static func day(_ date: Date) -> String {
        let c = utc.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }
}
