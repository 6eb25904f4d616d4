import Foundation

/// The apps' wire formats: `yyyy-MM-dd'T'HH:mm:ss.SSSZ` in UTC and `yyyy-MM-dd`.
enum YonaDateFormat {
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static func timestamp(_ date: Date) -> String {
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        let millis = min(999, (c.nanosecond ?? 0) / 1_000_000)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000",
                      c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!, millis)
    }

    static func day(_ date: Date) -> String {
        let c = utc.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }
}
