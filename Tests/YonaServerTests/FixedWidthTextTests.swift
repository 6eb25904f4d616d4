import Foundation
import Testing

@testable import YonaAPI
@testable import YonaCrypto
@testable import YonaDomain

/// The byte-by-byte formatters (timestamps, days, weeks, UUIDs, hex, base64url) against what Foundation's
/// `String(format:)`, `Calendar` and `Data` write for the same values: they replaced those on the read path, so every
/// value must come out exactly as before.
@Suite struct FixedWidthTextTests {
    /// The formatter the fast timestamp replaced: Calendar fields in UTC and `String(format:)`.
    static func foundationTimestamp(_ date: Date) -> String {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        let millis = min(999, ((c.nanosecond ?? 0) + 1_000) / 1_000_000)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!, millis)
    }

    @Test func timestampsMatchFoundationsFromYearOneToNineThousand() {
        var generator = SystemRandomNumberGenerator()
        var dates: [Date] = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: -0.001),
            Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 951_868_799.999), // 2000-02-29, its last ms
            Date(timeIntervalSince1970: 4_107_542_400), Date(timeIntervalSince1970: 1_771_882_138.5565),
            Date(timeIntervalSince1970: 1_771_882_138.986), Date(timeIntervalSince1970: 1_483_272_000), // 2017-01-01T12:00Z
            Date(timeIntervalSince1970: -2_208_988_800), Date(timeIntervalSince1970: 253_402_300_799), // 1900, 9999's end
        ]
        for _ in 0..<20_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: -62_000_000_000...250_000_000_000, using: &generator)))
        }
        for _ in 0..<20_000 {
            // whole and fractional milliseconds around now, where the apps' dates are
            let millis = Int64.random(in: 1_400_000_000_000...2_100_000_000_000, using: &generator)
            dates.append(Date(timeIntervalSince1970: Double(millis) / 1_000))
        }
        for date in dates {
            let expected = Self.foundationTimestamp(date)
            #expect(YonaDateFormat.timestamp(date) == expected, "\(date.timeIntervalSince1970)")
        }
    }

    /// The byte reader of `parseTimestamp` against the calendar's way it stands in for: the same date to the bit, or
    /// both refusing, for written timestamps, every month's edge days and random text of the same shape (digits out of
    /// range, offsets with and without a colon, fractions of every length, other digits than ASCII, stray bytes).
    @Test func timestampsAreReadAsTheCalendarReadsThem() {
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "2017-01-01T12:00:00.000+0000", "2000-02-29T23:59:59.999Z", "1900-02-29T00:00:00Z", "2024-02-30T00:00:00Z",
            "2023-04-31T10:00:00.5+05:30", "2023-00-10T10:00:00Z", "2023-13-10T10:00:00Z", "2023-12-00T10:00:00Z",
            "2023-12-31T24:00:00Z", "2023-06-30T24:00:00Z", "2023-06-15T23:60:00Z", "2023-06-15T23:59:60Z", "1582-10-10T00:00:00Z",
            "1583-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999-2359", "2023-06-15T10:00:00.1234567890Z",
            "2023-06-15T10:00:00.Z", "2023-06-15T10:00:00", "2023-06-15T10:00:00+01", "2023-06-15T10:00:00+01:0", "2023-06-15T10:00:00Zx",
            "2023-06-15 10:00:00Z", "٢٠٢٣-06-15T10:00:00Z", "2023-06-15T10:00:00+0a00", "", "Z", "2023-06-15T10:00:00-00:00",
        ]
        for year in [1583, 1600, 1900, 1970, 2000, 2023, 2024, 2100, 2400, 9999] {
            for month in 0...13 {
                for day in [0, 1, 28, 29, 30, 31, 32] {
                    texts.append(String(format: "%04d-%02d-%02dT00:00:00Z", year, month, day))
                }
            }
        }
        for _ in 0..<20_000 {
            let date = Date(timeIntervalSince1970: Double.random(in: -12_000_000_000...250_000_000_000, using: &generator))
            texts.append(YonaDateFormat.timestamp(date))
            texts.append(YonaDateFormat.zonedTimestamp(date))
        }
        let digits = Array("0123456789")
        let signs = ["Z", "+", "-"]
        for _ in 0..<20_000 {
            func d(_ n: Int) -> String { String((0..<n).map { _ in digits.randomElement(using: &generator)! }) }
            var text = "\(d(4))-\(d(2))-\(d(2))T\(d(2)):\(d(2)):\(d(2))"
            if Bool.random(using: &generator) { text += "." + d(Int.random(in: 0...10, using: &generator)) }
            let sign = signs.randomElement(using: &generator)!
            text += sign == "Z" ? "Z" : sign + d(2) + (Bool.random(using: &generator) ? ":" : "") + d(2)
            texts.append(text)
        }
        for text in texts {
            let fast = YonaDateFormat.parseTimestamp(text)
            let calendar = YonaDateFormat.parseTimestampByCalendar(text)
            #expect(fast?.timeIntervalSinceReferenceDate.bitPattern == calendar?.timeIntervalSinceReferenceDate.bitPattern, "\(text)")
        }
    }

    /// Zones, days and weeks were read with regex literals (compiled again on every call); `numbers(inShape:)` reads
    /// them now. The old readers, kept here, are the reference: for texts of their shape with random digits, and
    /// with one byte swapped for a digit of another script, a letter, a separator or nothing, both answer the same.
    @Test func zonesDaysAndWeeksAreReadAsTheirRegexesReadThem() {
        func zoneByRegex(_ zone: String) -> (Int, Int)? {
            guard let m = zone.wholeMatch(of: /([0-2][0-9]):([0-5][0-9])-([0-2][0-9]):([0-5][0-9])/) else { return nil }
            return (Int(m.1)! * 60 + Int(m.2)!, Int(m.3)! * 60 + Int(m.4)!)
        }
        func dayByRegex(_ text: String) -> Date? {
            guard let m = text.wholeMatch(of: /(\d{4})-(\d{2})-(\d{2})/), let year = Int(m.1), let month = Int(m.2), let day = Int(m.3),
                let date = UserCalendar.calendar.date(from: DateComponents(year: year, month: month, day: day))
            else { return nil }
            return UserCalendar.day(date) == text ? date : nil
        }
        func weekByRegex(_ text: String) -> Date? {
            guard let m = text.uppercased().wholeMatch(of: /(\d{4})-W(\d{2})/), let year = Int(m.1), let week = Int(m.2), (1...53).contains(week),
                let monday = UserCalendar.isoCalendar.date(from: DateComponents(weekday: 2, weekOfYear: week, yearForWeekOfYear: year))
            else { return nil }
            let sunday = UserCalendar.adding(days: -1, to: UserCalendar.startOfDay(monday))
            return UserCalendar.week(sunday) == text.uppercased() ? sunday : nil
        }
        var generator = SystemRandomNumberGenerator()
        let strays = ["٣", "x", "w", "W", " ", "-", ":", "", "12", "é"]
        func variants(_ shape: String, digits: () -> String) -> [String] {
            let text = String(shape.map { $0 == "9" ? Character(digits()) : $0 })
            var chars = Array(text).map(String.init)
            let index = Int.random(in: 0..<chars.count, using: &generator)
            chars[index] = strays.randomElement(using: &generator)!
            return [text, chars.joined()]
        }
        var zones = ["00:00-24:00", "08:15-09:45", "24:00-24:15", "29:59-00:00", "30:00-31:00", "7:00-08:00", "08:00-09:60"]
        var days = ["2016-03-15", "2016-02-29", "2015-02-29", "2016-03-161234", "2016-13-01", "0000-01-01", "2016-3-15"]
        var weeks = ["2016-W11", "2016-w11", "2015-W53", "2016-W53", "2016-W00", "2016-W54", "2016W11", "2016-W1"]
        let digit = { String(Int.random(in: 0...9, using: &generator)) }
        let low = { String(Int.random(in: 0...3, using: &generator)) }
        for _ in 0..<3_000 {
            zones += variants("99:99-99:99", digits: Bool.random(using: &generator) ? low : digit)
            days += variants("20" + "99-99-99", digits: Bool.random(using: &generator) ? low : digit)
            weeks += variants("20" + "99-W99", digits: Bool.random(using: &generator) ? low : digit)
        }
        for zone in zones { #expect(GoalSpec.minutes(zone).map { [$0.0, $0.1] } == zoneByRegex(zone).map { [$0.0, $0.1] }, "\(zone)") }
        for day in days { #expect(UserCalendar.parseDay(day) == dayByRegex(day), "\(day)") }
        for week in weeks { #expect(UserCalendar.parseWeek(week) == weekByRegex(week), "\(week)") }
    }

    @Test func zonedTimestampsKeepTheirOffset() {
        // 2026-03-29 01:30 UTC is 03:30 in Amsterdam (summer time began at 01:00 UTC); January is +0100
        #expect(YonaDateFormat.zonedTimestamp(Date(timeIntervalSince1970: 1_774_747_800)) == "2026-03-29T03:30:00.000+0200")
        #expect(YonaDateFormat.zonedTimestamp(Date(timeIntervalSince1970: 1_767_225_600)) == "2026-01-01T01:00:00.000+0100")
    }

    @Test func daysAndWeeksMatchFoundations() {
        var iso = Calendar(identifier: .iso8601)
        iso.timeZone = UserCalendar.calendar.timeZone
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let date = Date(timeIntervalSince1970: Double.random(in: 0...4_000_000_000, using: &generator))
            let c = UserCalendar.calendar.dateComponents([.year, .month, .day], from: date)
            #expect(UserCalendar.day(date) == String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!))
            let sunday = UserCalendar.weekStart(date)
            let w = iso.dateComponents([.yearForWeekOfYear, .weekOfYear], from: UserCalendar.adding(days: 1, to: sunday))
            #expect(UserCalendar.week(sunday) == String(format: "%04d-W%02d", w.yearForWeekOfYear!, w.weekOfYear!))
        }
        var digits: [UInt8] = []
        digits.appendDigits(-7, width: 3)
        digits.appendDigits(12_345, width: 2)
        #expect(String(decoding: digits, as: UTF8.self) == "-00712345")
    }

    @Test func idsAndHashesAreSpelledAsBefore() {
        for _ in 0..<2_000 {
            let id = UUID()
            #expect(id.lowercasedString == id.uuidString.lowercased())
            let bytes = (0..<Int.random(in: 0...40)).map { _ in UInt8.random(in: 0...255) }
            #expect(Hex.lowercase(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        }
        #expect(UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255)).lowercasedString == "00010203-0405-0607-0809-0a0b0c0d0eff")
    }

    @Test func idsAreReadAsFoundationReadsThem() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFgG-{} xé\u{0}")
        var texts = [
            "", "-", String(repeating: "0", count: 36), "00000000-0000-0000-0000-000000000000",
            "{00000000-0000-0000-0000-000000000000}", "00000000000000000000000000000000",
        ]
        for _ in 0..<5_000 {
            let id = UUID()
            var text = Array(Bool.random(using: &generator) ? id.uuidString : id.uuidString.lowercased())
            texts.append(String(text))
            // One change in a valid id: a character replaced, removed or added, or the case of some letters flipped.
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: text[Int.random(in: 0..<text.count, using: &generator)] = alphabet.randomElement(using: &generator)!
            case 1: text.remove(at: Int.random(in: 0..<text.count, using: &generator))
            case 2: text.insert(alphabet.randomElement(using: &generator)!, at: Int.random(in: 0...text.count, using: &generator))
            default: text = text.map { Bool.random(using: &generator) ? Character($0.uppercased()) : $0 }
            }
            texts.append(String(text))
        }
        // Foundation reads with `sscanf("%2hhx")`, which also takes a space or a sign before a digit and a one-digit
        // byte; only the canonical form is an id to this server.
        let hex = Set("0123456789abcdefABCDEF")
        for text in texts {
            let canonical =
                text.count == 36 && text.unicodeScalars.count == 36
                && text.enumerated().allSatisfy { index, character in
                    [8, 13, 18, 23].contains(index) ? character == "-" : hex.contains(character)
                }
            #expect(UUID(text: text) == (canonical ? UUID(uuidString: text) : nil), "\(text.unicodeScalars.map(\.value))")
            #expect(UUID(text: Substring(text)) == UUID(text: text))
            if canonical { #expect(UUID(uuidString: text) != nil) }
        }
    }

    @Test func base64URLRoundTripsAndRefusesOtherAlphabets() {
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == foundation)
            #expect(Base64URL.decode(foundation) == bytes)
        }
        let password = YonaPassword.generate()
        #expect(YonaPassword(header: password.wireValue)?.bytes == password.bytes)
        for refused in ["ab+c", "ab/c", "abc=", "ab c", "abé", "ab\u{0}c", "a"] {
            #expect(Base64URL.decode(refused) == nil, "\(refused)")
        }
    }
}
