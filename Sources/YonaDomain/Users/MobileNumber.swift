import Foundation

/// A mobile number in the international form the apps send (`+31612345678`), checked as Yona does:
/// `^\+[1-9][0-9]+$`, and no trunk `0` right after the country code (`+310612...` is refused).
package struct MobileNumber: Sendable, Equatable, CustomStringConvertible {
    package let value: String

    package init(_ raw: String) throws(YonaError) {
        let digits = raw.dropFirst()
        guard raw.hasPrefix("+"), (7...15).contains(digits.count),
            digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0"
        else {
            throw YonaError(.invalidMobileNumber, quoting: raw)
        }
        let countryCode = digits.prefix(Self.countryCodeLength(digits))
        let national = digits.dropFirst(countryCode.count)
        guard national.first != "0" else { throw YonaError(.mobileNumberLeadingZero, quoting: raw) }
        // Yona refuses numbers that are not mobile; the Dutch plan is the one known here (mobile: 6x and 970x).
        if countryCode == "31", !(national.hasPrefix("6") || national.hasPrefix("970")) {
            throw YonaError(.mobileNumberNotMobile, quoting: raw)
        }
        value = raw
    }

    /// ITU-T E.164 country codes are 1 digit in zones 1 and 7, 2 digits for the codes below, 3 otherwise.
    private static func countryCodeLength(_ digits: Substring) -> Int {
        if digits.first == "1" || digits.first == "7" { return 1 }
        let twoDigit: Set<Substring> = [
            "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46", "47",
            "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65",
            "66", "81", "82", "84", "86", "90", "91", "92", "93", "94", "95", "98",
        ]
        return twoDigit.contains(digits.prefix(2)) ? 2 : 3
    }

    /// Never printed in full: logs must not carry numbers.
    package var description: String { "MobileNumber(redacted)" }
}
