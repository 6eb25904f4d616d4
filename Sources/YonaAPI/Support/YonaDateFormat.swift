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
        // UTC fields by integer arithmetic (days since the epoch to a civil date, Howard Hinnant's algorithm), not
        // through a Calendar and `String(format:)`: every resource the apps read carries several timestamps.
        let interval = date.timeIntervalSince1970
        let wholeSeconds = interval.rounded(.down)
        // Before 1583 Foundation's Gregorian calendar is Julian (as Java's was); no date of ours is that old.
        guard wholeSeconds >= firstProlepticSecond, wholeSeconds < 253_402_300_800 else { return calendarTimestamp(date) }
        let milliseconds = millis(nanoseconds: Int(((interval - wholeSeconds) * 1_000_000_000).rounded(.down)))
        let seconds = Int(wholeSeconds)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return utcText(
            year: year, month: month, day: day, hour: secondOfDay / 3_600, minute: secondOfDay % 3_600 / 60, second: secondOfDay % 60,
            millis: milliseconds)
    }

    /// `yyyy-MM-ddTHH:mm:ss.SSS+0000`, the one layout of both paths of `timestamp`.
    private static func utcText(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millis: Int) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(28)
        text.appendDay(year: year, month: month, day: day)
        text.append(UInt8(ascii: "T"))
        text.appendDigits(hour, width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendDigits(minute, width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendDigits(second, width: 2)
        text.append(UInt8(ascii: "."))
        text.appendDigits(millis, width: 3)
        text.append(contentsOf: "+0000".utf8)
        return String(decoding: text, as: UTF8.self)
    }

    /// 1583-01-01T00:00:00Z: from here on the proleptic Gregorian calendar below and Foundation's agree.
    private static let firstProlepticSecond: Double = -12_212_553_600

    private static func calendarTimestamp(_ date: Date) -> String {
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        return utcText(
            year: c.year!, month: c.month!, day: c.day!, hour: c.hour!, minute: c.minute!, second: c.second!,
            millis: millis(nanoseconds: c.nanosecond ?? 0))
    }

    /// Truncated like Java does; the microsecond absorbs binary floating-point error (0.986 stored as 0.98599…).
    private static func millis(nanoseconds: Int) -> Int { min(999, (nanoseconds + 1_000) / 1_000_000) }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (negative before it).
    static func civilDate(daysSinceEpoch: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = daysSinceEpoch + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `yyyy-MM-dd'T'HH:mm:ss.SSSZ` in the users' time zone (`UserCalendar`), with its offset (`+0100`, `+0200`): how
    /// Yona prints the times of a day's activities.
    package static func zonedTimestamp(_ date: Date) -> String {
        let zone = UserCalendar.calendar.timeZone
        let offset = zone.secondsFromGMT(for: date)
        let shifted = date.addingTimeInterval(TimeInterval(offset))
        let local = timestamp(shifted).dropLast(5)
        let minutes = abs(offset) / 60
        var suffix: [UInt8] = [UInt8(ascii: offset < 0 ? "-" : "+")]
        suffix.appendDigits(minutes / 60, width: 2)
        suffix.appendDigits(minutes % 60, width: 2)
        return local + String(decoding: suffix, as: UTF8.self)
    }

    /// Parses `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (any numeric offset, `Z` too) as the apps and analyzers send it. Every
    /// analyzer post carries one or more, so the usual text is read byte by byte (a regex literal is compiled again
    /// on every call: 12% of a conflict post's CPU); what that does not take (other digits than ASCII, a year before
    /// 1583, an hour, minute or second out of range, which the calendar rolls over) goes the calendar's way.
    package static func parseTimestamp(_ text: String) -> Date? {
        var text = text
        switch text.withUTF8({ parseUsualTimestamp($0) }) {
        case .date(let date): return date
        case .noDate: return nil
        case .unusual: return parseTimestampByCalendar(text)
        }
    }

    private enum UsualTimestamp {
        case date(Date)
        /// The usual form, but no day of the calendar (the 31st of a 30-day month): the calendar's way refuses it too.
        case noDate
        case unusual
    }

    private static func parseUsualTimestamp(_ bytes: UnsafeBufferPointer<UInt8>) -> UsualTimestamp {
        func rest(from index: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[min(index, bytes.count)...]) }
        func byte(_ index: Int, is expected: Character) -> Bool { index < bytes.count && bytes[index] == expected.asciiValue! }
        guard bytes.count > 19, let fields = FixedShape.numbers(UnsafeBufferPointer(rebasing: bytes[..<19]), shape: "9999-99-99T99:99:99")
        else { return .unusual }
        let (year, month, day, hour, minute, second) = (fields[0], fields[1], fields[2], fields[3], fields[4], fields[5])
        var index = 19
        var fraction = 0.0
        if byte(index, is: ".") {
            let start = index + 1
            var end = start
            while end < bytes.count, end - start < 10, (48...57).contains(bytes[end]) { end += 1 }
            guard (1...9).contains(end - start) else { return .unusual }
            // As the calendar's way reads it: the same text through the same conversion.
            fraction = Double("0." + String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)) ?? 0
            index = end
        }
        var offset = 0
        if byte(index, is: "Z") {
            guard index + 1 == bytes.count else { return .unusual }
        } else if byte(index, is: "+") || byte(index, is: "-") {
            let sign = byte(index, is: "-") ? -1 : 1
            if let hoursAndMinutes = FixedShape.numbers(rest(from: index + 1), shape: "99:99") {
                offset = (hoursAndMinutes[0] * 3600 + hoursAndMinutes[1] * 60) * sign
            } else if let both = FixedShape.numbers(rest(from: index + 1), shape: "9999") {
                offset = (both[0] / 100 * 3600 + both[0] % 100 * 60) * sign
            } else {
                return .unusual
            }
        } else {
            return .unusual
        }
        guard year >= 1583, hour < 24, minute < 60, second < 60 else { return .unusual }
        guard (1...12).contains(month), (1...daysIn(month: month, of: year)).contains(day) else { return .noDate }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
        return .date(Date(timeIntervalSince1970: TimeInterval(seconds)).addingTimeInterval(fraction - Double(offset)))
    }

    private static func daysIn(month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (the inverse of `civilDate`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The calendar's way: every text `parseTimestamp` reads, the usual ones too (the tests hold the two equal).
    package static func parseTimestampByCalendar(_ text: String) -> Date? {
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
        return CalendarText.day(year: c.year!, month: c.month!, day: c.day!)
    }
}
