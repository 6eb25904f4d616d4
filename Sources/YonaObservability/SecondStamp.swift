import Foundation

/// The current time written with `strftime`, formatted again only when the second changes: the access lines'
/// local time stamp and the listeners' `Date` header, each asked for on every request.
package struct SecondStamp {
    private let format: String
    private let utc: Bool
    private var second = -1
    private var value = ""

    /// `utc: false` is the local time zone.
    package init(format: String, utc: Bool) {
        self.format = format
        self.utc = utc
    }

    package mutating func current() -> String {
        var now = time(nil)
        guard now != second else { return value }
        var parts = tm()
        if utc { gmtime_r(&now, &parts) } else { localtime_r(&now, &parts) }
        var buffer = [CChar](repeating: 0, count: 64)
        strftime(&buffer, buffer.count, format, &parts)
        second = now
        value = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return value
    }
}
