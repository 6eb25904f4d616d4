import Foundation

/// A day of one goal, at the detail the place asks for (Yona leaves out what a place does not show, never `null`):
/// in a day overview and in the with-buddies overview (`spread` for time-zone goals only), inside a week (no
/// `spread`), and as the day detail (everything, with `date` and `timeZoneId`).
package struct DayActivityDTO: Encodable {
    package var date: String? = nil
    package var timeZoneId: String? = nil
    package var spread: [Int]? = nil
    package let totalActivityDurationMinutes: Int
    package let goalAccomplished: Bool
    package let totalMinutesBeyondGoal: Int
    package let _links: HALLinks
}

/// An item of the day overviews: the day and its goals.
package struct DayActivityOverviewDTO: Encodable {
    package let date: String
    package let timeZoneId: String
    package let dayActivities: [DayActivityDTO]
    package let _links: HALLinks
}

/// A goal's week: in the week overview its days only; as the week detail also the week's summed `spread` and total.
package struct WeekActivityDTO: Encodable {
    package var date: String? = nil
    package var timeZoneId: String? = nil
    package var spread: [Int]? = nil
    package var totalActivityDurationMinutes: Int? = nil
    /// Keyed `SUNDAY` … `SATURDAY`.
    package let dayActivities: [String: DayActivityDTO]
    package let _links: HALLinks
}

/// An item of the week overviews: the week (`YYYY-Www`) and its goals.
package struct WeekActivityOverviewDTO: Encodable {
    package let date: String
    package let timeZoneId: String
    package let weekActivities: [WeekActivityDTO]
    package let _links: HALLinks
}

/// An item of the with-buddies overview: per activity category, the user's and the buddies' days.
package struct DayActivityOverviewWithBuddiesDTO: Encodable {
    package struct Category: Encodable {
        package let dayActivitiesForUsers: [DayActivityDTO]
        package let _links: HALLinks
    }

    package let date: String
    package let timeZoneId: String
    package let dayActivities: [Category]
    package let _links: HALLinks
}

/// A page of report items, as Yona pages them (`page` object, Spring's paging links: `HALLinks.paged`).
package struct ReportPageDTO<Item: Encodable>: Encodable {
    package let _embedded: [String: [Item]]?
    package let page: MessagePageDTO.PageInfo
    package let _links: HALLinks

    package init(rel: String, items: [Item], number: Int, size: Int, totalElements: Int, href: (Int) -> String) {
        let totalPages = (totalElements + size - 1) / size
        _embedded = items.isEmpty ? nil : [rel: items]
        page = .init(size: size, totalElements: totalElements, totalPages: totalPages, number: number)
        _links = HALLinks.paged(number, of: totalPages, href: href)
    }
}

/// One of Yona's raw activities: times in the user's time zone, `app` "" for network activity, the whole minutes
/// between start and end, and the same as an ISO-8601 duration (`PT20M`), as Java's `Duration` prints it.
package struct RawActivityDTO: Encodable {
    package let startTime: String
    package let endTime: String
    package let app: String
    package let durationMinutes: Int
    package let duration: String
    package let deviceName: String

    package init(start: Date, end: Date, app: String, deviceName: String) {
        startTime = YonaDateFormat.zonedTimestamp(start)
        endTime = YonaDateFormat.zonedTimestamp(end)
        self.app = app
        durationMinutes = max(0, Int((end.timeIntervalSince(start) / 60).rounded(.down)))
        duration = Self.isoDuration(minutes: durationMinutes)
        self.deviceName = deviceName
    }

    /// `PT0S`, `PT20M`, `PT1H`, `PT1H5M`, `PT25H` (Java never uses days here).
    package static func isoDuration(minutes: Int) -> String {
        guard minutes > 0 else { return "PT0S" }
        let (hours, rest) = minutes.quotientAndRemainder(dividingBy: 60)
        return "PT" + (hours > 0 ? "\(hours)H" : "") + (rest > 0 ? "\(rest)M" : "")
    }
}

/// The raw activities of one goal's day.
package struct RawActivitiesDTO: Encodable {
    package let _embedded: [String: [RawActivityDTO]]
    package let _links: HALLinks
}
